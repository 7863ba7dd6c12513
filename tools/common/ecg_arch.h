/* Target ISAs of the lowering (`ecg-lower --arch`) and how to build and run code for
 * them from an x86-64 Debian host (ecg-bench). One table, shared by the tools. */
#ifndef ECG_ARCH_H
#define ECG_ARCH_H
#include <stddef.h>

/** One target ISA. All strings are static; none is NULL except where noted. */
typedef struct ecg_arch_info {
  const char *name;     /**< --arch value and model.json "arch": "native", "aarch64", "riscv64" */
  const char *machine;  /**< uname -m of a machine that runs it natively; NULL for native (the host) */
  const char *cross;    /**< default CROSS_COMPILE prefix ("aarch64-linux-gnu-"); "" for native */
  const char *cflags;   /**< default CFLAGS of the lowered Makefile for this ISA; NULL for native
                             (the native Makefile keeps its own default) */
  const char *qemu;     /**< qemu-user emulator ("qemu-aarch64"); NULL for native */
  const char *sysroot;  /**< Debian cross sysroot for qemu -L ("/usr/aarch64-linux-gnu"); NULL for native */
  const char *packages; /**< Debian packages providing cross compiler, OpenMP and emulator; NULL for native */
} ecg_arch_info;

/** The entry named name, or NULL when unknown (use ecg_arch_names() in the message). */
const ecg_arch_info *ecg_arch_find(const char *name);
/** "native, aarch64, riscv64": the valid names, for error messages. */
const char *ecg_arch_names(void);
/** uname -m of the machine running this program ("x86_64"); "unknown" when it cannot be read. */
const char *ecg_arch_host(void);
/** This machine's CPU model, as /proc/cpuinfo's first "model name" (x86) or "Model" line,
 *  into buf (cap bytes); "unknown" when there is none. The key of measured costs
 *  (DESIGN.md "Measured costs") and of the peak cache. */
void ecg_cpu_name(char *buf, size_t cap);
/** The key of this machine's measured costs (DESIGN.md "Measured costs"): its CPU model
 *  (ecg_cpu_name) into cpu, the ISA lowered models built with -march=native use here
 *  ("avx512", "avx2", "neon" or "generic") into *isa, and the thread count
 *  (OMP_NUM_THREADS, else 1) into *threads. */
void ecg_host_key(char *cpu, size_t ncpu, const char **isa, int *threads);
/** True when code built for a runs on this host without emulation (native, or the host's own ISA). */
int ecg_arch_is_host(const ecg_arch_info *a);

#endif
