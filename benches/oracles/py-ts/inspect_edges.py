import json,sys,collections,random
root=sys.argv[1]; f=sys.argv[2]; n=int(sys.argv[3]) if len(sys.argv)>3 else 10
random.seed(0)
src={}
def L(p,l):
    p=p if p.startswith('/') else root+'/'+p
    if p not in src: src[p]=open(p,'rb').read().split(b'\n')
    return src[p][l-1]
rs=[json.loads(l) for l in open(f)]
print(collections.Counter(r['status'] for r in rs))
print('kinds',collections.Counter((r['callee_kind'],r['callee_in_project']) for r in rs).most_common(14))
for st in ['non_def','unresolved','ambiguous','resolved']:
    sel=[r for r in rs if r['status']==st]
    print('==',st,len(sel))
    for r in random.sample(sel,min(n,len(sel))):
        s=L(r['caller_path'],r['site_line'])
        print('  %s:%d %s | %s | -> %s %s %s' % (r['caller_path'],r['site_line'],r['caller_qualname'][-40:], s[max(0,r['site_col']-20):r['site_col']+30].decode(errors='replace').strip(), r['callee_kind'], r['callee_qualname'], r.get('alt') and [a['qualname'] for a in r['alt']]))
