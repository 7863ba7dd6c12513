/* The command line shared by every tool (DESIGN.md "Conventions every tool follows"):
 * one option parser, so onnx2ecg, ecg-dump, ecg-lower and ecg-bench accept and reject
 * the same spellings and word their usage errors alike.
 *
 * Accepted: `--name`, `--name VALUE`, `--name=VALUE`, `-x`, `-x VALUE`, `-` (stdin, a
 * positional), `--` (the rest are positionals); positionals may come anywhere.
 * Rejected with ECG_ERR_USAGE, naming the option exactly as typed: an unknown option;
 * a single-dash long option (`-input-shape`, with a hint when `--input-shape` exists);
 * clustered or attached short options (`-vo`, `-oFILE`); a missing value; an empty
 * value (`-o ""`: no option takes one); a value given to a flag (`--help=x`).
 */
#ifndef ECG_CLI_H
#define ECG_CLI_H

#include "ecg.h"

/** One option: long name (without "--"; NULL for short only), short letter (0 for
 *  long only), whether it takes a value, and the id cli_next returns for it (> 0). */
typedef struct cli_opt {
  const char *name;
  char short_name;
  int has_arg;
  int id;
} cli_opt;

/** Parser state over argv; zero-initialise it with cli_init. */
typedef struct cli {
  int argc;
  char **argv;
  const cli_opt *opts; /**< terminated by an entry with id 0 */
  int i;               /**< next argv index */
  int rest;            /**< after "--": everything is a positional */
  const char *typed;   /**< the last option as typed (for messages), e.g. "--runs" */
} cli;

enum {
  CLI_END = 0,         /**< no arguments left */
  CLI_POSITIONAL = -1, /**< *value is a positional argument */
  CLI_ERROR = -2       /**< usage error: message in e, e->code == ECG_ERR_USAGE */
};

/** Start parsing argv[1..argc-1] against opts (terminated by {0}). */
void cli_init(cli *c, int argc, char **argv, const cli_opt *opts);
/** The next option or positional: an option's id (with *value its argument, or NULL
 *  for a flag), CLI_POSITIONAL (*value the argument), CLI_END, or CLI_ERROR with a
 *  usage message in e (the option as typed and what is wrong, then "(try --help)"). */
int cli_next(cli *c, const char **value, ecg_err *e);
/** Print "PROG: MSG" (and, for a usage error, nothing else) on stderr; returns code.
 *  PROG is in bold red when cli_colour(stderr) allows colour. */
int cli_fail(const char *prog, int code, const char *msg);

/* ---------------------------------------------------------------- terminal manners
 * Every tool takes -q/--quiet (errors only on stderr) and -v/--verbose (progress);
 * colour and progress lines appear only on a terminal. */

/** Whether messages to f may be coloured: f is a terminal and the NO_COLOR environment
 *  variable is unset or empty (https://no-color.org). */
bool cli_colour(FILE *f);
/** Whether progress lines (rewritten in place with '\r') may go to stderr: stderr is a
 *  terminal and quiet is false. */
bool cli_progress(bool quiet);
/** A note or warning on stderr, "PROG: note: MSG" (the tag in yellow when coloured),
 *  unless quiet: the messages that -q silences (errors are never silenced). */
void cli_note(const char *prog, bool quiet, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Read all of f into a malloc'd buffer (*buf, *len; the caller frees it; one spare byte
 *  after the data, set to 0, so text can be read as a string). Returns 0, or ENOMEM / the
 *  read's errno. The one whole-file reader of the tools. */
int cli_read_all(FILE *f, unsigned char **buf, size_t *len);
/** cli_read_all of the file at path: ECG_OK, or ECG_ERR_INPUT naming the path (cannot open,
 *  read error), ECG_ERR_INTERNAL (out of memory). */
int cli_read_path(const char *path, unsigned char **buf, size_t *len, ecg_err *e);

/** One --input-shape NAME=D0xD1x... binding (onnx2ecg, ecg-lower). dims[i] >= 0 fixes dim
 *  i; dims[i] < 0 leaves it symbolic with symbol syms[i] (a name given on the command line,
 *  e.g. "N"). */
typedef struct cli_shape {
  const char *name;                /**< graph input name (owned by the caller: malloc'd) */
  int rank;                        /**< number of dims given */
  int64_t dims[ECG_MAX_RANK];
  char syms[ECG_MAX_RANK][32];     /**< symbol for dims[i] < 0 */
} cli_shape;
/** Parse an --input-shape argument "NAME=1x3x224x224" (a dim may be a symbol such as "N"
 *  to keep it dynamic) into *s; s->name is a malloc'd copy the caller frees. Returns ECG_OK
 *  or ECG_ERR_USAGE with a message (ECG_ERR_INTERNAL on out of memory). */
int cli_parse_shape(const char *arg, cli_shape *s, ecg_err *e);

#endif
