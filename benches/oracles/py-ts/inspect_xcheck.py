import json,sys,collections
root=sys.argv[1]; xf=sys.argv[2]; n=int(sys.argv[3]) if len(sys.argv)>3 else 15
src={}
def L(p,l):
    p=root+'/'+p
    if p not in src: src[p]=open(p,'rb').read().split(b'\n')
    return src[p][l-1]
rs=[json.loads(l) for l in open(xf)]
print(collections.Counter(r['verdict'] for r in rs))
for v in ['pyright_only','jedi_only','disagree','overlap']:
    sel=[r for r in rs if r['verdict']==v]
    print('==',v,len(sel), collections.Counter(r['jedi_status'] for r in sel))
    for r in sel[:n]:
        s=r['site']
        print(' ',s[0],s[1],'|',L(s[0],s[1])[max(0,s[2]-25):s[2]+25].decode(errors='replace'),'| J:',[L(*x).decode().strip()[:40] for x in r['jedi']],r['jedi_status'],'| P:',[L(*x).decode().strip()[:40] for x in r['pyright']])
