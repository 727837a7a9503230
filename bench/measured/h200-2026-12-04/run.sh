#!/bin/sh
# On the GPU machine, from the repository root: probe, apply test, full measurement.
export PYTHONUNBUFFERED=1
D=gpucheck
{ date -u; lscpu; nvidia-smi; free -g; python3 -c 'import sys,torch;print(sys.version);print(torch.__version__, torch.get_num_threads(), torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)'; } > $OUT/host.txt 2>&1
echo "probe"; timeout 90 python3 $D/host_probe.py > $OUT/probe.json 2> $OUT/probe.err; echo "probe rc=$?"
rm -rf /tmp/pp && mkdir -p /tmp/pp/dplace && cp python/dplace/torch_export.py /tmp/pp/dplace/ && cp scripts/dplace-export-torch /tmp/pp/dplace/_export_torch.py && : > /tmp/pp/dplace/__init__.py
for t in test_gpu_placement_trains_as_unplaced test_residual_conv_on_cpu_trains_as_unplaced test_mlp_on_cpu_trains_as_unplaced; do
  (cd /tmp && PYTHONPATH=/tmp/pp timeout 60 python3 $OLDPWD/tests/python/test_py_torch_apply.py $t; echo "$t rc=$?") >> $OUT/apply.log 2>&1
done
cat $OUT/apply.log
echo "measure"; timeout 430 python3 $D/scripts/dplace-measure-torch --manifest $D/manifest.json --csv $OUT/measured.csv --time-budget 390 > $OUT/full.log 2>&1; echo "measure rc=$?"
tail -4 $OUT/full.log; cat $OUT/probe.json
