#!/bin/sh
# rt_build.sh TARGET OUTDIR: build the runtime unit tests for TARGET (native, x86-64-v3: the
# AVX2/FMA paths on an AVX-512 machine, or aarch64)
# into OUTDIR: rt_test (runtime vs double-precision reference loops), rt_nchwc_test (the NCHWc
# kernels vs reference loops) and rt_port_test
# (the vector paths vs the portable C path, the runtime compiled twice: see rt_port_test.c).
# aarch64 uses Debian's cross compiler (gcc-aarch64-linux-gnu); run the results with
# qemu-aarch64 -L /usr/aarch64-linux-gnu. Exit non-zero when a compile fails.
set -eu
target=$1; out=$2
cd "$(dirname "$0")/../.."
rt=tools/lower/runtime
case $target in
  native)  cc=${CC:-cc}; vec="-O3 -march=native -fopenmp"; port="-O3 -fopenmp -mno-avx -mno-avx2 -mno-fma"
           want=$(printf '#if defined(__AVX512F__)\navx512-8x48\n#elif defined(__AVX2__) && defined(__FMA__)\navx2-6x16\n#else\nc-6x16\n#endif\n' |
                  $cc $vec -E -P - | tr -d '[:space:]') ;;
  x86-64-v3) cc=${CC:-cc}; vec="-O3 -march=x86-64-v3 -fopenmp"; port="-O3 -fopenmp -mno-avx -mno-avx2 -mno-fma"; want=avx2-6x16 ;;
  aarch64) cc=aarch64-linux-gnu-gcc; vec="-O3 -fopenmp"; port="-O3 -fopenmp -march=armv8-a+nosimd"; want=neon-8x12 ;;
  *) echo "rt_build.sh: unknown target '$target' (native, x86-64-v3 or aarch64)" >&2; exit 2 ;;
esac
command -v "$cc" >/dev/null || { echo "rt_build.sh: $cc not found (Debian gcc-aarch64-linux-gnu libgomp1-arm64-cross libc6-dev-arm64-cross; make setup)" >&2; exit 1; }
mkdir -p "$out"
# ecg_rt_id.h (ecg_rt.h includes it): made by ecg-lower's build for lowered directories
# shellcheck disable=SC2046 # the sources in the Makefile's order (byte order), so the id is ecg-lower's
sh scripts/rt_id.sh $(printf '%s\n' $rt/*.c $rt/*.h | LC_ALL=C sort) > "$out/ecg_rt_id.h"
# Each runtime file is compiled once (it was compiled into each of the three tests: 90 s
# on 2 cores, serial), every compile and link its own job, as many at once as cores.
jobs=$(nproc 2>/dev/null || echo 1)
par() { # par: run each line of stdin as a shell command, $jobs at once; non-zero if one fails
  tr '\n' '\0' | xargs -0 -P "$jobs" -n 1 sh -c 'eval "$1"' sh
}
export cc vec port rt out
objs=""
for f in $rt/*.c; do objs="$objs $out/rt_$(basename "$f" .c).o"; done
{
  for f in $rt/*.c; do echo "\$cc \$vec -I\$rt -I\$out -c $f -o \$out/rt_$(basename "$f" .c).o"; done
  for f in ecg_gemm ecg_pool; do
    echo "\$cc \$port -I\$rt -I\$out -include tests/unit/rt_port.h -c \$rt/$f.c -o \$out/port_$f.o"
  done
} | par
{
  echo "\$cc \$vec -I\$rt -I\$out tests/unit/rt_test.c $objs -lm -o \$out/rt_test"
  echo "\$cc \$vec -I\$rt -I\$out tests/unit/rt_nchwc_test.c $objs -lm -o \$out/rt_nchwc_test"
  echo "\$cc \$vec -I\$rt -I\$out -DECG_EXPECT_KERNEL='\"$want\"' tests/unit/rt_port_test.c $objs \$out/port_ecg_gemm.o \$out/port_ecg_pool.o -lm -o \$out/rt_port_test"
} | par
