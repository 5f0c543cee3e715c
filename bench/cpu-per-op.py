#!/usr/bin/env python3
"""CPU time per op of md's stat benchmarks, before and after a change.

On a shared box wall-clock ns/op drift 2x between runs; the CPU time a
benchmark process uses per op drifts less. Each benchmark runs alone with
GOMAXPROCS=1 at N=1 and N=200000 iterations; (CPU(N) - CPU(1)) / (N-1) is
its cost per op, set-up excluded. Before and after alternate, ROUNDS times.

    (cd OLD && CGO_ENABLED=0 go test -c -o DIR/md-before.test ./md/)
    CGO_ENABLED=0 go test -c -o DIR/md-after.test ./md/
    bench/cpu-per-op.py DIR [ROUNDS]
"""
import os, resource, subprocess, sys

N = 200000
DIR = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
PLAN = [("before", "BenchmarkHEAD"), ("after", "BenchmarkHEAD"), ("after", "BenchmarkHEADBearer"),
        ("after", "BenchmarkHEADBasic"), ("after", "BenchmarkHEADAccessLog"), ("after", "BenchmarkHEADBearerAccessLog"),
        ("before", "BenchmarkPROPFINDDepth0"), ("after", "BenchmarkPROPFINDDepth0"),
        ("after", "BenchmarkPROPFINDDepth0Bearer"), ("after", "BenchmarkPROPFINDDepth0BearerAccessLog")]


def cpu(binary, bench, n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["nice", "-n", "10", binary, "-test.run", "^$", "-test.bench", "^" + bench + "$",
                        "-test.benchtime", f"{n}x", "-test.benchmem"],
                       cwd=DIR, capture_output=True, text=True, env=dict(os.environ, GOMAXPROCS="1"))
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(p.stdout + p.stderr)
    line = [l for l in p.stdout.splitlines() if l.startswith("Benchmark")][0]
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), line


res = {}
for rnd in range(ROUNDS):
    for which, b in PLAN:
        binary = os.path.join(DIR, f"md-{which}.test")
        c1, _ = cpu(binary, b, 1)
        cn, line = cpu(binary, b, N)
        per = (cn - c1) / (N - 1) * 1e9
        res.setdefault((which, b), []).append(per)
        f = line.split()
        print(f"round {rnd+1} {which:6} {b:42} {per:7.0f} ns CPU/op   [{f[2]} ns/op wall, {' '.join(f[4:])}]"
              f"  load {open('/proc/loadavg').read().split()[0]}", flush=True)
print()
for (which, b), v in res.items():
    v = sorted(v)
    print(f"{which:6} {b:42} median {v[len(v)//2]:6.0f} ns CPU/op  all {' '.join('%.0f' % x for x in v)}")
