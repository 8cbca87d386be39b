package sub

type Base struct{}

func (Base) Name() string { return "b" }
func New() *Base          { return &Base{} }
