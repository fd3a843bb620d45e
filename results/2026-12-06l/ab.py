import json,sys,glob,gzip,statistics,collections
# usage: ab.py DIR  -> median µs per (shape,M,variant) for build vs build-old, new/old-1
def load(p):
    op=gzip.open if p.endswith('.gz') else open
    return json.load(op(p))
t=collections.defaultdict(lambda: collections.defaultdict(list))
for p in sorted(glob.glob(sys.argv[1]+'/ab-*.json*')):
    b='new' if '-build.json' in p else 'old'
    for r in load(p)['records']:
        if r.get('regime')!='cold': continue
        t[(r['shape'],r['m'],r['variant'])][b].append(r['median_us'])
print('| shape | M | variant | landed µs | trial µs | trial/landed |')
print('|---|---|---|---|---|---|')
for k in sorted(t):
    o=t[k]['old']; n=t[k]['new']
    if not o or not n: continue
    mo=statistics.median(o); mn=statistics.median(n)
    print(f'| {k[0]} | {k[1]} | {k[2]} | {mo:.3f} | {mn:.3f} | {100*(mn/mo-1):+.2f}% |')
