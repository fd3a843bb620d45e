# scripts/devcall.sh: the common start of a one-command device call
# (results/*/call*.sh), sourced as `. scripts/devcall.sh NAME` from the
# repository root on the GPU machine:
#   O     the runner's $OUT (required)
#   W     a work directory; on exit it is packed into $O/NAME.tar.gz and
#         its steps.txt printed, so a timed-out call still returns it
#   P     bin/parharness, unpacked from build-alt/parharness.gz
#   build/ unpacked from build-alt/build.tar.xz when it did not travel
#   step TEXT   appends "<seconds>s TEXT" to $W/steps.txt
#   left END    seconds left until END seconds after the start
# It also writes the card's name, driver, clocks and power to $W/smi.txt.
O=${OUT:?devcall.sh: OUT is not set (run under the device runner)}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
[ -d build ] || tar -xJf build-alt/build.tar.xz
devcall_start=$SECONDS
step() { echo "$((SECONDS - devcall_start))s $*" >>"$W/steps.txt"; }
left() { echo $(($1 - (SECONDS - devcall_start))); }
trap 'tar -czf "$O/'"$1"'.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
