/*
 * commands.h - subcommands implemented outside main.c. Each takes the arguments after
 * its name and returns the process exit status (0 success, 1 bad input, 2 usage,
 * 3 out of memory or output error), having printed any error as one line
 * "heapref: ...".
 */
#ifndef HEAPREF_CLI_COMMANDS_H
#define HEAPREF_CLI_COMMANDS_H

/* heapref types [--summary | --rtype ADDR] BINARY [PATTERN] (cmd_binary.c) */
int cmd_types(int argc, char **argv);
/* heapref vars [--pc PC | --dump DUMP] BINARY [PATTERN] (cmd_binary.c) */
int cmd_vars(int argc, char **argv);

/* heapref analyze [-o FILE] [--text ...] [--max-depth N] [--stats] BINARY DUMP (cmd_analyze.c) */
int cmd_analyze(int argc, char **argv);
/* heapref why [--max-depth N] [--stats] BINARY DUMP ADDRESS... (cmd_analyze.c) */
int cmd_why(int argc, char **argv);
/* heapref retained [--format text|tsv] [-n N] ... BINARY DUMP (cmd_analyze.c) */
int cmd_retained(int argc, char **argv);

#endif
