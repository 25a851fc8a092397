/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every subcommand shares (cli.h), below main.c, which only dispatches:
 * one-line errors, JSON output, the simple commands' options, and where
 * reports go (stderr, the journal).
 */
#include <getopt.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "cli.h"
#include "sd-protocol.h"

void cli_error(const char *fmt, ...) {
        va_list ap;

        fputs("kubemount: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int cli_print_json(json_t *v) {
        int r;

        if (!v)
                return -ENOMEM;
        r = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(v);
        return r < 0 ? -EIO : 0;
}

int cli_simple_options(struct cli *cli, int argc, char **argv, const char *help, int *optind_ret) {
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'J' },
                {},
        };
        int c;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        return 1;
                case 'J':
                        cli->json = true;
                        break;
                default:
                        cli_error("%s: unrecognized option '%s'", argv[0], argv[optind - 1]);
                        return -EINVAL;
                }
        *optind_ret = optind;
        return 0;
}

static void log_to_stderr(int level, const char *message, void *userdata _unused_) {
        fprintf(stderr, "kubemount: %s%s\n",
                level == KM_LOG_WARNING  ? "warning: "
                : level == KM_LOG_NOTICE ? "notice: "
                                         : "",
                message);
}

static int stderr_max_level;
static bool stderr_is_journal, journal_listens;

/* $JOURNAL_STREAM is "DEV:INODE" of the stream systemd gave as stdout/stderr. */
static bool stderr_journal_stream(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
               (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/*
 * Events (km_log_fields(): mounts, unmounts, refusals, containers) go to the
 * journal's native socket whenever it listens, with their MESSAGE_IDs; other
 * lines only when stderr is the journal anyway (a service).  A terminal still
 * sees what is meant for it.
 */
static void log_sink(int level, const char *message, void *userdata) {
        const char *const *fields = km_log_fields();
        /* An event's outcome is the command's own output; a log (the agent's, -v) shows events too. */
        bool shown = level <= stderr_max_level && (!fields || stderr_max_level >= KM_LOG_NOTICE);

        if (!journal_listens && journal_connected()) {
                /* Connected in the host (cli_log_host) since the set-up. */
                journal_listens = true;
                stderr_is_journal = stderr_journal_stream();
        }
        if (journal_listens && (fields || (shown && stderr_is_journal)) && journal_send(level, message, fields) == 0 &&
            stderr_is_journal)
                return;
        if (shown)
                log_to_stderr(level, message, userdata);
}

void cli_log_setup(int verbose) {
        cli_log_setup_level(verbose ? KM_LOG_INFO + verbose - 1 : KM_LOG_WARNING);
}

void cli_log_setup_level(int max_level) {
        stderr_max_level = max_level;
        journal_listens = journal_present();
        stderr_is_journal = journal_listens && stderr_journal_stream();
        km_log_set(log_sink, NULL, max_level);
}

void cli_log_host(const struct km_host *host) {
        /*
         * The journal is the host's: a caller in a container without its socket reaches it there, at the
         * command's first entry into the host (its mount's): an entry of its own cost 4% of a mount+umount.
         */
        if (journal_listens)
                return;
        if (host)
                journal_connect_in_host();
        else
                (void)journal_connect(); /* here is the host */
}
