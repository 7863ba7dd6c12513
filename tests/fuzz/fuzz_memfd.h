/* The fuzzer's bytes as a file for parsers that take a path (profile databases, device
 * profiles): a memfd, named by /proc/self/fd/N. Shared by the libFuzzer harnesses. */
#ifndef FUZZ_MEMFD_H
#define FUZZ_MEMFD_H
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/** Write data[0..size) into a new memfd and its path into path (cap bytes). Returns the
 *  fd (close it when done), or -1 when the memfd cannot be made or written. */
static int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t cap) {
  int fd = memfd_create("fuzz", 0);
  if (fd < 0) return -1;
  for (size_t off = 0; off < size;) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) { close(fd); return -1; }
    off += (size_t)w;
  }
  snprintf(path, cap, "/proc/self/fd/%d", fd);
  return fd;
}
#endif
