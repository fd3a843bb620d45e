#!/usr/bin/env bash
# Call 3's dispatch: the H200 acceptance cut short (accept-short.sh)
# on an H200, else call3.sh. Carry build/ and build-alt/.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $name"
case $name in
*H200*) exec bash results/2026-12-06i/accept-short.sh ;;
*) exec bash results/2026-12-06i/call3.sh ;;
esac
