/* The lowered directory's manifest (manifest.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int ecg_names_add(ecg_names *l, const char *name, ecg_err *e) {
  char **v = realloc(l->v, sizeof *v * (size_t)(l->n + 1));
  if (!v) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  l->v = v;
  if (!(v[l->n] = strdup(name))) return ecg_errf(e, ECG_ERR_INTERNAL, "out of memory");
  l->n++;
  return ECG_OK;
}

bool ecg_names_has(const ecg_names *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->v[i], name)) return true;
  return false;
}

void ecg_names_free(ecg_names *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

/** qsort comparator for char *. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int ecg_list_dir(const char *dir, ecg_names *out, ecg_err *e) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(dir);
  if (!d) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", dir, strerror(errno));
  struct dirent *ent;
  int rc = ECG_OK;
  while (!rc && (ent = readdir(d)))
    if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..")) rc = ecg_names_add(out, ent->d_name, e);
  closedir(d);
  if (rc) ecg_names_free(out);
  else if (out->n) qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
  return rc;
}

/** A name the manifest may hold: a plain file name in the directory. */
static bool plain_name(const char *s) {
  return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int ecg_manifest_read(const char *dir, ecg_manifest *m, ecg_err *e) {
  memset(m, 0, sizeof *m);
  char path[4096];
  snprintf(path, sizeof path, "%s/" ECG_MANIFEST_NAME, dir);
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? ECG_OK : ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  m->present = true;
  char line[4096];
  int rc = ECG_OK, no = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    no++;
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    if (!strncmp(line, "file ", 5) && plain_name(line + 5)) rc = ecg_names_add(&m->files, line + 5, e);
    else if (!strncmp(line, "built ", 6) && plain_name(line + 6)) rc = ecg_names_add(&m->built, line + 6, e);
    else rc = ecg_errf(e, ECG_ERR_INPUT, "%s:%d: expected 'file NAME' or 'built NAME' (a plain file name)", path, no);
  }
  if (!rc && ferror(f)) rc = ecg_errf(e, ECG_ERR_INPUT, "%s: read error", path);
  fclose(f);
  if (rc) ecg_manifest_free(m);
  return rc;
}

bool ecg_manifest_owns(const ecg_manifest *m, const char *name) {
  return !strcmp(name, ECG_MANIFEST_NAME) || ecg_names_has(&m->files, name) || ecg_names_has(&m->built, name);
}

int ecg_manifest_write(const char *path, const ecg_names *files, const ecg_names *built, ecg_err *e) {
  FILE *f = fopen(path, "wx");
  if (!f) return ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(errno));
  fprintf(f, "# ecg-lower %s: the files ecg-lower wrote here (file) and those its Makefile builds (built).\n"
             "# ecg-lower replaces or deletes only these; anything else in this directory is left alone.\n",
          ECG_VERSION_STRING);
  for (int i = 0; i < files->n; i++) fprintf(f, "file %s\n", files->v[i]);
  for (int i = 0; i < built->n; i++) fprintf(f, "built %s\n", built->v[i]);
  int err = fflush(f) != 0 || ferror(f) ? errno : 0;
  if (fclose(f) != 0 && !err) err = errno;
  return err ? ecg_errf(e, ECG_ERR_INPUT, "%s: %s", path, strerror(err)) : ECG_OK;
}

void ecg_manifest_free(ecg_manifest *m) {
  ecg_names_free(&m->files);
  ecg_names_free(&m->built);
  m->present = false;
}
