#!/bin/sh
# Builds build/fuzz/fuzz_model (libFuzzer + ASan + UBSan) from the whole runtime.
# Kernel files get their ISA flags from their name, as in SConstruct. Run from the
# repository root: sh tests/fuzz/build_fuzz_model.sh. It also leaves the runtime's objects
# in build/fuzz/model-obj/ for the second target, fuzz_shapes (README.md).
set -e
CC=${CC:-clang}
OUT=build/fuzz/model-obj
mkdir -p "$OUT"
FLAGS="-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -D_GNU_SOURCE -DEMBER_BUILDING -Iinclude -Icsrc"
case "$(uname -m)" in
    x86_64|amd64) KERNELS="csrc/kernels/x86/*.c" ;;
    aarch64|arm64) KERNELS="csrc/kernels/arm/*__neon_aarch64.c" ;;
    *) KERNELS="" ;;
esac
# Headers are not tracked per object: any header newer than an object rebuilds it.
NEWEST_HEADER=$(ls -t $(find include csrc -name '*.h') | head -n 1)
OBJS=""
for src in csrc/base/*.c csrc/plan/*.c csrc/core/*.c csrc/ops/*.c csrc/kernels/*.c \
           csrc/kernels/generic/*.c csrc/api.c $KERNELS; do
    base=$(basename "$src" .c)
    isa=""
    case "$base" in
        *__avx2_fma) isa="-mavx2 -mfma" ;;
        *__avx512f) isa="-mavx512f -mfma" ;;
        *__sse2) isa="-msse2" ;;
    esac
    obj="$OUT/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$NEWEST_HEADER" -nt "$obj" ]; then
        $CC $FLAGS $isa -c "$src" -o "$obj" &
    fi
    OBJS="$OBJS $obj"
done
wait
$CC -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -D_GNU_SOURCE -Iinclude -Icsrc tests/fuzz/fuzz_model.c $OBJS -lm -lpthread \
    -o build/fuzz/fuzz_model
echo "built build/fuzz/fuzz_model"
