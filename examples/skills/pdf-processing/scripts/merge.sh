#!/bin/sh
# Merge PDF files: merge.sh OUT.pdf IN1.pdf IN2.pdf ...
set -eu
out="$1"
shift
exec qpdf --empty --pages "$@" -- "$out"
