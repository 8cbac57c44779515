"""Recomputes every parity case with numpy (float64, PyTorch-style broadcasting/transposes) and compares with the
Java Reference's output. Dev tool only: the Java tests never need Python.

  mvn -pl tests -am verify -Dtest=CaseDumpTest -Dsurefire.failIfNoSpecifiedTests=false -Dattn.dumpCases=/tmp/cases.txt
  python3 tests/tools/numpy_crosscheck.py /tmp/cases.txt
"""
import numpy as np, re, math, sys
PATH = sys.argv[1] if len(sys.argv) > 1 else '/tmp/cases.txt'
def f32(s): return np.float64(np.float32(float(s)))
def parse():
    cases=[]; cur=None
    for line in open(PATH):
        parts=line.rstrip('\n').split('\t')
        if parts[0]=='case': cur={'name':parts[1],'ins':[]}; cases.append(cur)
        elif parts[0]=='op': cur['op']=parts[1]; cur['params']=parts[2]
        elif parts[0] in ('in','ref'):
            dims=eval(parts[1]); vals=np.array([float(x) for x in parts[2].split()],dtype=np.float64) if parts[2].strip() else np.zeros(0)
            if parts[0]=='in': vals=vals.astype(np.float32).astype(np.float64)
            arr=vals.reshape(dims)
            if parts[0]=='in': cur['ins'].append(arr)
            else: cur['ref']=arr
    return cases
def P(params,key):
    m=re.search(key+r'=([^,\]]+)',params); return m.group(1)
def masked_softmax(scores, params, masks):
    # scores (B,H,L,S) already scaled
    causal=P(params,'causal')=='true'; ak=P(params,'attnMask'); kk=P(params,'keyPadding')
    B,H,L,S=scores.shape
    s=scores.copy()
    mi=0
    if causal:
        s=np.where(np.triu(np.ones((L,S),bool),1)[None,None],-np.inf,s)
    if ak!='NONE':
        m=masks[mi]; mi+=1
        if m.ndim==2: m=m[None,None]
        m=np.broadcast_to(m,s.shape)
        s=np.where(m!=0,-np.inf,s) if ak=='BOOL' else s+m
    if kk!='NONE':
        m=masks[mi][:,None,None,:]; m=np.broadcast_to(m,s.shape)
        s=np.where(m!=0,-np.inf,s) if kk=='BOOL' else s+m
    return softmax(s)
def softmax(s):
    mx=s.max(-1,keepdims=True)
    dead=np.isneginf(mx)
    e=np.exp(s-np.where(dead,0,mx))
    with np.errstate(invalid='ignore'):
        out=e/e.sum(-1,keepdims=True)
    return np.where(dead,0.0,out)
def run(c):
    op=c['op']; p=c['params']; x=c['ins']
    if op=='MATMUL':
        a,b=x; ta=P(p,'transA')=='true'; tb=P(p,'transB')=='true'; al=f32(P(p,'alpha'))
        if ta: a=np.swapaxes(a,-1,-2)
        if tb: b=np.swapaxes(b,-1,-2)
        return al*np.matmul(a,b)
    if op=='ADD_BIAS': return x[0]+x[1]
    if op=='ADD':
        with np.errstate(invalid='ignore'): return x[0]+x[1]
    if op=='SCALE':
        with np.errstate(over='ignore'): return x[0]*f32(P(p,'factor'))
    if op=='RELU': return np.maximum(x[0],0)
    if op=='SOFTMAX':
        sc=f32(P(p,'scale')); s=x[0]*sc
        if 'causal=true' in p or 'attnMask=NONE' not in p or 'keyPadding=NONE' not in p:
            return masked_softmax(s,p,x[1:])
        return softmax(s)
    if op=='LAYER_NORM':
        eps=f32(P(p,'eps')); hw=P(p,'hasWeight')=='true'; hb=P(p,'hasBias')=='true'
        v=x[0]; mu=v.mean(-1,keepdims=True); var=((v-mu)**2).mean(-1,keepdims=True)
        y=(v-mu)/np.sqrt(var+eps); i=1
        if hw: y=y*x[i]; i+=1
        if hb: y=y+x[i]
        return y
    if op=='GELU':
        v=x[0]
        if P(p,'tanh')=='true': return 0.5*v*(1+np.tanh(math.sqrt(2/math.pi)*(v+0.044715*v**3)))
        return np.vectorize(lambda t: 0.5*t*math.erfc(-t/math.sqrt(2)))(v)
    if op=='EMBEDDING': return x[1][x[0].astype(int)]
    if op=='POSITIONAL_ENCODING':
        off=int(P(p,'offset')); B,L,E=x[0].shape
        pe=np.zeros((L,E)); pos=np.arange(off,off+L)[:,None]
        div=np.exp(np.arange(0,E,2)*(-math.log(10000.0)/E))
        pe[:,0::2]=np.sin(pos*div); pe[:,1::2]=np.cos(pos*div[:E//2])
        return x[0]+pe[None]
    if op=='SPLIT_HEADS':
        H=int(P(p,'heads')); B,L,E=x[0].shape
        return x[0].reshape(B,L,H,E//H).transpose(0,2,1,3)
    if op=='MERGE_HEADS':
        B,H,L,D=x[0].shape; return x[0].transpose(0,2,1,3).reshape(B,L,H*D)
    if op=='CONCAT': return np.concatenate(x,axis=int(P(p,'axis')))
    if op=='MEAN': return x[0].mean(axis=int(P(p,'axis')))
    if op=='ATTENTION':
        sc=f32(P(p,'scale')); q,k,v=x[:3]
        s=np.einsum('bhld,bhsd->bhls',q,k)*sc
        w=masked_softmax(s,p,x[3:])
        return np.einsum('bhls,bhsd->bhld',w,v)
    raise Exception(op)
worst=0; bad=0; cases=parse()
for c in cases:
    r=run(c); ref=c['ref']
    assert r.shape==ref.shape,(c['name'],r.shape,ref.shape)
    fin=np.isfinite(ref)
    same=np.array_equal(np.isnan(r),np.isnan(ref)) and np.array_equal(np.where(fin,0,r)[~np.isnan(r)],np.where(fin,0,ref)[~np.isnan(ref)])
    with np.errstate(invalid='ignore'): d=np.abs(r-ref)[fin]; den=np.abs(ref[fin]).max() if fin.any() else 1
    rel=(d.max()/max(den,1e-300)) if d.size else 0
    worst=max(worst,rel)
    if not same or rel>1e-12: print('MISMATCH',c['name'],rel,same); bad+=1
print('cases',len(cases),'mismatches',bad,'worst max-abs/max|ref|',worst)
sys.exit(1 if bad else 0)
