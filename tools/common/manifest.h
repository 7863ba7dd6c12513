/* The manifest of a lowered directory (tools/lower/LOWERED.md "Ownership").
 *
 * `ecg-lower -o DIR` records in DIR/ecg-lower.manifest every file it wrote ("file NAME")
 * and every file the Makefile it wrote builds ("built NAME"). Those, and only those,
 * are ecg-lower's: it replaces or deletes nothing else in DIR, and ecg-bench builds
 * and runs only a directory that has a manifest. The file is text: lines starting
 * with '#' are comments; NAME is a plain file name (no '/', not "." or "..").
 */
#ifndef ECG_MANIFEST_H
#define ECG_MANIFEST_H

#include <stdbool.h>

#include "ecg.h"

#define ECG_MANIFEST_NAME "ecg-lower.manifest"

/** A list of file names; owns the strings. */
typedef struct ecg_names {
  char **v;
  int n;
} ecg_names;

/** A manifest as read: present is false when DIR has none (then both lists are empty). */
typedef struct ecg_manifest {
  bool present;
  ecg_names files; /**< written by ecg-lower */
  ecg_names built; /**< built by the lowered Makefile (objects, libraries, runner) */
} ecg_manifest;

/** Append a copy of name. ECG_ERR_INTERNAL on out of memory. */
int ecg_names_add(ecg_names *l, const char *name, ecg_err *e);
/** True when l holds name. */
bool ecg_names_has(const ecg_names *l, const char *name);
/** Free the names. */
void ecg_names_free(ecg_names *l);
/** The entries of directory dir except "." and "..", sorted by strcmp. Errors:
 *  ECG_ERR_INPUT "DIR: strerror", ECG_ERR_INTERNAL. */
int ecg_list_dir(const char *dir, ecg_names *out, ecg_err *e);

/** Read dir/ecg-lower.manifest into m. No manifest is not an error (m->present false).
 *  Errors: ECG_ERR_INPUT "DIR/ecg-lower.manifest: ..." (unreadable, or a line that is not
 *  "file NAME" / "built NAME" with a plain NAME), ECG_ERR_INTERNAL (out of memory). */
int ecg_manifest_read(const char *dir, ecg_manifest *m, ecg_err *e);
/** True when name is the manifest itself or listed in it (written or built). */
bool ecg_manifest_owns(const ecg_manifest *m, const char *name);
/** Write the manifest at path (files, then built), created as a new file. Errors:
 *  ECG_ERR_INPUT "PATH: strerror" (I/O), ECG_ERR_INTERNAL. */
int ecg_manifest_write(const char *path, const ecg_names *files, const ecg_names *built, ecg_err *e);
/** Free m's lists. */
void ecg_manifest_free(ecg_manifest *m);

#endif
