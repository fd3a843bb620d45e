#!/usr/bin/env bash
# One device call: the H200 acceptance run (results/2026-12-06h/accept.sh)
# when the card is an H200, else the DSK_GATHER_PIPE A/B and the qkv
# wp3/wps profile (results/2026-12-06h/next-gather.sh). Build as those
# scripts' headers say; carry build/ and build-alt/.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $name"
case $name in
*H200*) exec bash results/2026-12-06h/accept.sh ;;
*) exec bash results/2026-12-06h/next-gather.sh ;;
esac
