/* Target ISA table (see ecg_arch.h). */
#include "ecg_arch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static const ecg_arch_info archs[] = {
    {"native", NULL, "", NULL, NULL, NULL, NULL},
    /* armv8-a: NEON (Advanced SIMD) is part of the base ISA, so __ARM_NEON is always set. */
    {"aarch64", "aarch64", "aarch64-linux-gnu-", "-O3 -fopenmp", "qemu-aarch64", "/usr/aarch64-linux-gnu",
     "gcc-aarch64-linux-gnu libgomp1-arm64-cross libc6-dev-arm64-cross qemu-user"},
    /* rv64gc (Debian's default): no vector extension, the portable C paths. */
    {"riscv64", "riscv64", "riscv64-linux-gnu-", "-O3 -fopenmp", "qemu-riscv64", "/usr/riscv64-linux-gnu",
     "gcc-riscv64-linux-gnu libgomp1-riscv64-cross libc6-dev-riscv64-cross qemu-user"},
};

const ecg_arch_info *ecg_arch_find(const char *name) {
  for (size_t i = 0; name && i < sizeof archs / sizeof archs[0]; i++)
    if (!strcmp(archs[i].name, name)) return &archs[i];
  return NULL;
}

const char *ecg_arch_names(void) { return "native, aarch64, riscv64"; }

const char *ecg_arch_host(void) {
  static struct utsname u;
  static int done;
  if (!done) done = uname(&u) == 0 ? 1 : -1;
  return done > 0 ? u.machine : "unknown";
}

int ecg_arch_is_host(const ecg_arch_info *a) { return !a->machine || !strcmp(a->machine, ecg_arch_host()); }

void ecg_cpu_name(char *buf, size_t cap) {
  snprintf(buf, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) && strncmp(line, "Model", 5)) continue;
    char *v = strchr(line, ':');
    if (!v) continue;
    for (v++; *v == ' ' || *v == '\t'; v++) {}
    v[strcspn(v, "\n")] = 0;
    snprintf(buf, cap, "%s", v);
    break;
  }
  fclose(f);
}

void ecg_host_key(char *cpu, size_t ncpu, const char **isa, int *threads) {
  ecg_cpu_name(cpu, ncpu);
#if defined(__x86_64__) || defined(__i386__)
  *isa = __builtin_cpu_supports("avx512f") ? "avx512" : __builtin_cpu_supports("avx2") ? "avx2" : "generic";
#elif defined(__aarch64__)
  *isa = "neon";
#else
  *isa = "generic";
#endif
  const char *t = getenv("OMP_NUM_THREADS");
  *threads = t && atoi(t) > 0 ? atoi(t) : 1;
}
