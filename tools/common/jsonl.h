/* jsonl: the reader of the one-line JSON records of measured costs (DESIGN.md "Measured
 * costs": ecg-fuse's profile database, EOP's device profiles). Minimal by design: keys
 * are found by name anywhere in the line, string values hold no escaped quotes. */
#ifndef ECG_JSONL_H
#define ECG_JSONL_H
#include <stddef.h>

/** The string value of "key" in line, copied into out (cap bytes). Returns 1, or 0 when
 *  the key is absent, its value is not a string, or it needs more than cap - 1 bytes. */
int jsonl_str(const char *line, const char *key, char *out, size_t cap);
/** The number value of "key" in line into *v. Returns 1, or 0 when absent or not a
 *  finite number. */
int jsonl_num(const char *line, const char *key, double *v);
#endif
