/* proc.c: run a child process and capture its stdout and stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/** A growable byte buffer (NUL-terminated). */
typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

/** Read what is available on fd into b. Returns bytes read (0 at EOF), -1 on error
 *  (errno set; ENOMEM when the buffer cannot grow). */
static ssize_t sbuf_read(sbuf *b, int fd) {
  if (b->cap - b->len < 4097) {
    size_t ncap = b->cap ? b->cap * 2 : 8192;
    char *np = realloc(b->p, ncap);
    if (!np) {
      errno = ENOMEM;
      return -1;
    }
    b->p = np;
    b->cap = ncap;
  }
  ssize_t got = read(fd, b->p + b->len, b->cap - b->len - 1);
  if (got > 0) b->len += (size_t)got;
  if (b->p) b->p[b->len] = 0;
  return got;
}

int bt_proc_run(char *const argv[], bt_proc *p, ecg_err *e) {
  memset(p, 0, sizeof *p);
  int po[2] = {-1, -1}, pe[2] = {-1, -1};
  if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
    int rc = ecg_errf(e, ECG_ERR_INTERNAL, "pipe: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
      if (po[i] >= 0) close(po[i]);
      if (pe[i] >= 0) close(pe[i]);
    }
    return rc;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, po[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(po[1]);
  close(pe[1]);
  if (err) {
    close(po[0]);
    close(pe[0]);
    return ecg_errf(e, ECG_ERR_INTERNAL, "cannot run %s: %s", argv[0], strerror(err));
  }
  sbuf out = {0}, errb = {0};
  struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_fds = 2, rc = ECG_OK;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      rc = ecg_errf(e, ECG_ERR_INTERNAL, "poll: %s", strerror(errno));
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = sbuf_read(i ? &errb : &out, fds[i].fd);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == ENOMEM) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory capturing %s", argv[0]);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
    if (rc) break;
  }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      if (!rc) rc = ecg_errf(e, ECG_ERR_INTERNAL, "waitpid: %s", strerror(errno));
      break;
    }
  }
  p->status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
  p->out = out.p ? out.p : strdup("");
  p->out_len = out.len;
  p->err = errb.p ? errb.p : strdup("");
  p->err_len = errb.len;
  while (p->err && p->err_len && (p->err[p->err_len - 1] == '\n' || p->err[p->err_len - 1] == '\r'))
    p->err[--p->err_len] = 0; /* messages are embedded in one-line errors */
  if (!rc && (!p->out || !p->err)) rc = ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  if (rc) bt_proc_clear(p);
  return rc;
}

void bt_proc_clear(bt_proc *p) {
  free(p->out);
  free(p->err);
  memset(p, 0, sizeof *p);
}
