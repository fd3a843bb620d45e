set -x
export PATH=$PWD/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
( time bin/parharness gate --quick --require-device --json $OUT/quick.json ) > $OUT/quick.log 2>&1; echo "quick rc=$?" >> $OUT/quick.log
tail -40 $OUT/quick.log
( time bin/parharness bench2 dec --m 1,8 --json $OUT/dec.json ) > $OUT/dec.log 2>&1; echo "dec rc=$?" >> $OUT/dec.log
tail -60 $OUT/dec.log
compute-sanitizer --tool memcheck bin/parharness gate --require-device --only 'e4m3-device-lanes' > $OUT/sanitizer.log 2>&1; echo "memcheck rc=$?" >> $OUT/sanitizer.log
compute-sanitizer --tool memcheck env | grep -i -E 'inject|preload|sanitizer' >> $OUT/sanitizer.log 2>&1
compute-sanitizer --tool memcheck bin/parharness bench2 copy --m 1 >> $OUT/sanitizer.log 2>&1; echo "bench under sanitizer rc=$?" >> $OUT/sanitizer.log
tail -30 $OUT/sanitizer.log
