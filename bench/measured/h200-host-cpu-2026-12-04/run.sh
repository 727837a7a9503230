#!/bin/sh
# On the GPU machine's host CPU, from the repository root: bench/calibrate_cpu.py's measure stage.
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=16 OMP_PROC_BIND=close OMP_PLACES=cores
sed -i "s#/work/main/#$(pwd)/#g" cpucal/manifest.json
python3 - > $OUT/bandwidth.txt 2>&1 <<'PY'
import time, torch
torch.set_num_threads(16)
a = torch.ones(64 * 1024 * 1024); b = torch.empty_like(a); best = 1e9
for _ in range(10):
    t = time.perf_counter(); b.copy_(a); best = min(best, time.perf_counter() - t)
print(f"copy rate {2 * a.numel() * 4 / best:.4g} B/s (16 threads, 256 MiB float32, best of 10)")
PY
cat $OUT/bandwidth.txt
M="taskset -c 0-15 python3 scripts/dplace-measure-torch --csv $OUT/cpucal.csv --map-all cpu --threads 16 --repeat 3 --steps 8 --warmup 3"
start=$(date +%s)
timeout 380 $M --manifest cpucal/manifest.json --time-budget 330 > $OUT/cpucal.log 2>&1; rc=$?
echo "measure rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc = 2 ]; then
  tail -2 $OUT/cpucal.log
  python3 -c "
import json; m=json.load(open('cpucal/manifest.json'))
m['models']=[e for e in m['models'] if ':' in e['model']]
json.dump(m, open('cpucal/manifest_own.json','w'))"
  timeout 300 $M --manifest cpucal/manifest_own.json --time-budget 250 > $OUT/cpucal.log 2>&1; echo "own models rc=$?"
fi
tail -3 $OUT/cpucal.log
