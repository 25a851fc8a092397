/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench: timing statistics, the results table (text and
 * markdown), progress messages and error counting.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kubemount.h"

#include "bench.h"

void say(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int errors;

void fail(const char *fmt, ...) {
        va_list ap;
        fputs("kubemount-bench: ERROR: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        errors++;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

double median(double *v, size_t n) {
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long iters(long base) {
        long n = lround((double)base * opt.scale);
        return n < 3 ? 3 : n;
}

static const char *fmt_time(double s, char *buf, size_t size) {
        if (isnan(s))
                snprintf(buf, size, "-");
        else if (s < 1e-3)
                snprintf(buf, size, "%.1f µs", s * 1e6);
        else if (s < 1.0)
                snprintf(buf, size, "%.2f ms", s * 1e3);
        else
                snprintf(buf, size, "%.2f s", s);
        return buf;
}

static const char *fmt_ratio(double r, char *buf, size_t size) {
        if (isnan(r))
                snprintf(buf, size, "-");
        else if (r < 0.01)
                snprintf(buf, size, "1/%.0f×", 1.0 / r);
        else if (r < 0.1)
                snprintf(buf, size, "%.3f×", r); /* not "0.01×" for 1/97 */
        else
                snprintf(buf, size, "%.2f×", r);
        return buf;
}

/* CPU pressure (PSI "some avg10", %), or -1 without /proc/pressure. */
static double cpu_pressure(void) {
        FILE *f = fopen("/proc/pressure/cpu", "re");
        double v = -1;

        if (f) {
                if (fscanf(f, "some avg10=%lf", &v) != 1)
                        v = -1;
                fclose(f);
        }
        return v;
}

/*
 * Other work on this 2-CPU machine adds a constant to every exec and
 * squeezes the ratios towards 1: wait (up to 2 minutes) until the CPU
 * pressure of the last 10 s is low.  Returns the pressure we started at.
 */
double wait_quiet(void) {
        double p = cpu_pressure();

        if (p < 0 || p <= 5.0)
                return p;
        say("  waiting for other work to finish (CPU pressure %.0f%%) ...", p);
        for (int i = 0; i < 120 && (p = cpu_pressure()) > 5.0; i++)
                sleep(1);
        return p;
}

/* ------------------------------------------------------------------ */
/* results */

static struct result results[64];
static size_t n_results;
static double section_pressure = -1; /* CPU pressure when the last result was taken */

struct result *add_result(const char *name, double ours, double peer) {
        struct result *r = &results[n_results < 63 ? n_results++ : 63];
        memset(r, 0, sizeof(*r));
        snprintf(r->name, sizeof(r->name), "%s", name);
        r->ours = ours;
        r->peer = peer;
        r->ratio = ours / peer;
        r->verdict = INFO;
        snprintf(r->goal, sizeof(r->goal), "-");
        /* The pressure of the last 10 s, i.e. while this was measured. */
        section_pressure = cpu_pressure();
        if (section_pressure > 5.0)
                snprintf(r->note, sizeof(r->note), "noisy? CPU pressure %.0f%% during the measurement",
                         section_pressure);
        return r;
}

void goal_ratio_max(struct result *r, double max) {
        snprintf(r->goal, sizeof(r->goal), "≤ %.2g×", max);
        r->verdict = r->ratio <= max ? PASS : MISS;
}

void note(struct result *r, const char *fmt, ...) {
        va_list ap;
        size_t n = strlen(r->note);
        if (n && n + 2 < sizeof(r->note)) {
                strcpy(r->note + n, "; ");
                n += 2;
        }
        va_start(ap, fmt);
        vsnprintf(r->note + n, sizeof(r->note) - n, fmt, ap);
        va_end(ap);
}

/* Text columns by display width (µ, ×, ≤ are multi-byte). */
static size_t width(const char *s) {
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

/* Left-aligned: pads after s was printed; right-aligned: prints padding and s. */
static void pad(FILE *f, const char *s, size_t w, bool right) {
        for (size_t i = width(s); i < w; i++)
                fputc(' ', f);
        if (right) {
                fputc(' ', f);
                fputs(s, f);
        } else
                fputc(' ', f);
}

static void print_results(FILE *f, bool markdown) {
        static const char *verdicts[] = { "info", "PASS", "MISS" };
        char a[32], b[32], c[32];

        if (markdown) {
                fprintf(f, "| benchmark | ours (median) | peer (median) | ratio | goal | result | notes |\n");
                fprintf(f, "|---|---|---|---|---|---|---|\n");
        } else
                fprintf(f, "%-66s  %11s %11s %10s  %-20s %s\n", "benchmark", "ours", "peer", "ratio", "goal", "result");
        for (size_t i = 0; i < n_results; i++) {
                const struct result *r = &results[i];
                fmt_time(r->ours, a, sizeof(a));
                fmt_time(r->peer, b, sizeof(b));
                fmt_ratio(r->ratio, c, sizeof(c));
                if (markdown)
                        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", r->name, a, b, c, r->goal,
                                r->verdict == INFO   ? "info"
                                : r->verdict == PASS ? "**PASS**"
                                                     : "**MISS**",
                                r->note);
                else {
                        fputs(r->name, f);
                        pad(f, r->name, 66, false);
                        pad(f, a, 11, true);
                        pad(f, b, 11, true);
                        pad(f, c, 10, true);
                        fputs("  ", f);
                        fputs(r->goal, f);
                        pad(f, r->goal, 20, false);
                        fprintf(f, "%s\n", verdicts[r->verdict]);
                        if (*r->note)
                                fprintf(f, "    %s\n", r->note);
                }
        }
}

void print_header(void) {
        struct utsname u;
        char date[64];
        time_t t = time(NULL);

        uname(&u);
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&t));
        printf("kubemount-bench: %s, kernel %s %s, %ld CPUs, kubemount %s\n", date, u.release, u.machine,
               sysconf(_SC_NPROCESSORS_ONLN), km_version());
        printf("kubemount: %s\n", km());
        if (opt.shim)
                printf("nsenter-compat: %s\n", opt.shim);
        {
                double load[3];
                double p = cpu_pressure();
                if (getloadavg(load, 3) == 3)
                        printf("load average at start: %.2f %.2f %.2f; CPU pressure (PSI some avg10): %.1f%%\n",
                               load[0], load[1], load[2], p);
                printf("each benchmark waits (up to 2 min) for CPU pressure <= 5%%; results measured under more "
                       "are marked \"noisy?\"\n");
        }
        printf("(medians; ratio = ours / peer; all in a throwaway mount+PID namespace)\n\n");
}

static size_t count_verdicts(enum verdict v) {
        size_t n = 0;
        for (size_t i = 0; i < n_results; i++)
                n += results[i].verdict == v;
        return n;
}

/* The table on stdout (and as markdown with --markdown), then the summary line. */
void print_report(void) {
        printf("\n");
        print_results(stdout, false);
        if (opt.markdown) {
                FILE *f = fopen(opt.markdown, "we");
                if (f) {
                        print_results(f, true);
                        fclose(f);
                }
        }
        if (errors)
                printf("\n%d ERROR(S): see above\n", errors);
        else
                printf("\nGoals: %zu met, %zu missed (benchmarks: a miss is reported, not failed)\n",
                       count_verdicts(PASS), count_verdicts(MISS));
}
