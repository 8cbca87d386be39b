// No-op entry points for the Kuzu extensions cruxe does not link (see build.rs).
namespace kuzu {
namespace main {
class ClientContext;
}
#define CRUXE_STUB(NS, CLASS)                                                  \
    namespace NS {                                                             \
    struct CLASS {                                                             \
        static void load(main::ClientContext* context);                        \
    };                                                                         \
    void CLASS::load(main::ClientContext*) {}                                  \
    }
CRUXE_STUB(algo_extension, AlgoExtension)
CRUXE_STUB(fts_extension, FtsExtension)
CRUXE_STUB(json_extension, JsonExtension)
CRUXE_STUB(vector_extension, VectorExtension)
}  // namespace kuzu
