/* SPDX-License-Identifier: MIT */
/* tkbench advise: what it prints (advise.h): the table of candidates, where
 * each figure comes from, and the recommendation with its trade-offs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/advise.h"
#include "params-internal.h"
#include "util.h"

void tkb_adv_bytes_text(char *b, size_t len, double v) {
    if (!isfinite(v) || v <= 0)
        snprintf(b, len, "?");
    else if (v >= 1024.0 * 1024 * 1024)
        snprintf(b, len, "%.3g GiB", v / (1024.0 * 1024 * 1024));
    else if (v >= 1024.0 * 1024)
        snprintf(b, len, "%.3g MiB", v / (1024.0 * 1024));
    else if (v >= 1024.0)
        snprintf(b, len, "%.3g KiB", v / 1024.0);
    else
        snprintf(b, len, "%.0f B", v);
}

/* A table cell of ns: one decimal, "-" when not measured. */
static void cell_ns(char *b, size_t len, double v) {
    if (isfinite(v))
        snprintf(b, len, "%.1f", v);
    else
        snprintf(b, len, "-");
}

void tkb_adv_late_text(char *b, size_t len, const adv_cand *c) {
    char d[32];
    if (c->late_src == ADV_SRC_NONE) {
        snprintf(b, len, "wake-up only");
        return;
    }
    tkb_duration_text(c->late_ns, d, sizeof d);
    snprintf(b, len, "%s%s", c->late_src == ADV_SRC_MODEL_TICK ? ">= " : "", d);
}

static void print_table(const adv_cand *cs, size_t n) {
    printf("\n%-3s %-36s %-6s %-21s %7s %7s %7s %7s  %-22s %-10s %s\n", "#", "candidate", "step",
           "ns/event (range)", "start", "modify", "cancel", "expire", "p99 lateness (source)",
           "memory", "cpu");
    size_t rankno = 0;
    for (size_t i = 0; i < n; i++) {
        const adv_cand *c = &cs[i];
        char no[24] = "-", st[32], ev[48], o[4][16], lt[40], lts[64], mem[24], cpu[24];
        bool ok = c->excluded[0] == '\0';
        if (ok)
            snprintf(no, sizeof no, "%zu", ++rankno);
        if (!c->valid) {
            printf("%-3s %-36s\n    excluded: %s\n", no, c->spec_in, c->excluded);
            continue;
        }
        tk__duration_text(c->step_ns, st, sizeof st);
        if (isfinite(c->event_ns))
            snprintf(ev, sizeof ev, "%.1f (%.1f-%.1f)", c->event_ns, c->event_min, c->event_max);
        else
            snprintf(ev, sizeof ev, "-");
        cell_ns(o[0], sizeof o[0], c->start_ns);
        cell_ns(o[1], sizeof o[1], c->modify_ns);
        cell_ns(o[2], sizeof o[2], c->cancel_ns);
        cell_ns(o[3], sizeof o[3], c->expire_ns);
        tkb_adv_late_text(lt, sizeof lt, c);
        snprintf(lts, sizeof lts, "%s (%s)", lt, tkb_adv_src_tag[c->late_src]);
        tkb_adv_bytes_text(mem, sizeof mem, c->mem_bytes);
        if (isfinite(c->cpu_pct))
            snprintf(cpu, sizeof cpu, "%.3g%%", c->cpu_pct);
        else
            snprintf(cpu, sizeof cpu, "-");
        printf("%-3s %-36s %-6s %-21s %7s %7s %7s %7s  %-22s %-10s %s\n", no, c->peer.spec, st, ev,
               o[0], o[1], o[2], o[3], lts, mem, cpu);
        if (!ok)
            printf("    excluded: %s\n", c->excluded);
    }
}

static void print_sources(double wake_ns, const char *dir, int reps) {
    char w[32];
    tkb_duration_text(wake_ns, w, sizeof w);
    printf("\nwhere the figures come from:\n"
           "  cost (ns per event; start/modify/cancel/expire: ns per operation): measured here,\n"
           "    the core-level replay of this trace, median of %d (range min-max), on a grid of\n"
           "    `step`: the engine's tick, 1us for an exact engine (docs/advisor.md)\n"
           "  memory: measured here: the core's state, the peak of what it allocates, and one\n"
           "    node (%zu B) per timer at the peak armed\n"
           "  cpu: modelled: cost per event x the trace's event rate, share of one core (no\n"
           "    wake-ups counted)\n"
           "  p99 lateness: DIR:replay = %s of this trace in %s;\n"
           "    DIR:W3 = %s there (same peer spec); model = one tick (ticked engines)\n"
           "    + the machine's wake-up p99 (%s%s);\n"
           "    model>= = one tick, the wake-up latency not known (a lower bound)\n",
           reps, sizeof(tk_node), tkb_wl_replay_exec.name, dir != NULL ? dir : "DIR (no --results)",
           tkb_wl_w3_latency.name, isfinite(wake_ns) ? w : "unknown",
           isfinite(wake_ns) ? ": the floor's nanosleep p99 in DIR" : ": no floor row in DIR");
}

/* One candidate in words: "hwheel:...: 31.0 ns per event, p99 lateness about 1.1 ms
 * (modelled: one tick + the wake-up), 40 KiB" */
static void say(const adv_cand *c, char *b, size_t len) {
    char lt[40], mem[24];
    tkb_duration_text(c->late_ns, lt, sizeof lt);
    tkb_adv_bytes_text(mem, sizeof mem, c->mem_bytes);
    char late[128];
    switch (c->late_src) {
    case ADV_SRC_DIR_REPLAY:
        snprintf(late, sizeof late, "%s (measured on this trace, from DIR)", lt);
        break;
    case ADV_SRC_DIR_W3:
        snprintf(late, sizeof late, "%s (measured by %s, from DIR)", lt, tkb_wl_w3_latency.name);
        break;
    case ADV_SRC_MODEL:
        snprintf(late, sizeof late, "about %s (modelled: %s the wake-up)", lt,
                 c->ticked ? "one tick +" : "");
        break;
    case ADV_SRC_MODEL_TICK:
        snprintf(late, sizeof late, "at least %s (modelled: one tick; wake-up not known)", lt);
        break;
    case ADV_SRC_NONE:
    case ADV_SRC_HERE:
    default:
        snprintf(late, sizeof late, "the machine's wake-up latency (not known here)");
        break;
    }
    snprintf(b, len, "%s: %.1f ns per event, p99 lateness %s, %s", c->peer.spec, c->event_ns, late,
             mem);
}

static void recommend(const adv_cand *cs, size_t n, adv_criterion k, const adv_needs *nd,
                      const char *trace, const char *trace_path) {
    size_t nok = 0;
    for (size_t i = 0; i < n; i++)
        nok += cs[i].excluded[0] == '\0';
    printf("\nrecommendation for %s (criterion: %s", trace, tkb_adv_crit_name[k]);
    char d[32];
    if (nd->lateness_ns > 0) {
        tkb_duration_text((double)nd->lateness_ns, d, sizeof d);
        printf("; need p99 lateness <= %s", d);
    }
    if (nd->memory_bytes > 0) {
        tkb_adv_bytes_text(d, sizeof d, nd->memory_bytes);
        printf("; need memory <= %s", d);
    }
    if (nd->cpu_pct > 0)
        printf("; need cpu <= %.3g%%", nd->cpu_pct);
    printf("):\n");
    if (nok == 0) {
        printf("  No candidate meets the needs (see the reasons above). Loosen a need, or measure "
               "lateness with --results DIR if it was only modelled.\n");
        return;
    }
    const adv_cand *best = &cs[0];
    char line[512];
    say(best, line, sizeof line);
    printf("  Use %s.\n", line);
    if (nok > 1) {
        const adv_cand *next = &cs[1];
        say(next, line, sizeof line);
        double more = next->event_ns / best->event_ns - 1;
        bool tie = k == ADV_CRIT_COST && fabs(more) < ADV_COST_TIE;
        printf("  Next by %s: %s (%+.1f%% cost%s).\n", tkb_adv_crit_name[k], line, 100 * more,
               tie ? ": within the noise of these measurements, so the lateness and memory decided"
                   : "");
    }
    /* the trade-offs: the best eligible candidate on each other figure */
    const adv_cand *late = NULL, *cheap = NULL, *small = NULL;
    for (size_t i = 0; i < n; i++) {
        const adv_cand *c = &cs[i];
        if (c->excluded[0] != '\0')
            continue;
        if (late == NULL ||
            tkb_adv_crit_value(c, ADV_CRIT_LATENESS) < tkb_adv_crit_value(late, ADV_CRIT_LATENESS))
            late = c;
        if (cheap == NULL || c->event_ns < cheap->event_ns)
            cheap = c;
        if (small == NULL || c->mem_bytes < small->mem_bytes)
            small = c;
    }
    double bl = tkb_adv_crit_value(best, ADV_CRIT_LATENESS);
    if (late != best && tkb_adv_crit_value(late, ADV_CRIT_LATENESS) < bl * 0.8) {
        char lt[40];
        tkb_duration_text(bl, lt, sizeof lt);
        say(late, line, sizeof line);
        printf("  Choose %s if you need lateness under %s (%s; %+.0f%% cost).\n", late->peer.spec,
               lt, line, 100.0 * (late->event_ns / best->event_ns - 1));
    }
    if (cheap != best && cheap->event_ns < best->event_ns * 0.9) {
        say(cheap, line, sizeof line);
        printf("  Choose %s if CPU matters more (%s).\n", cheap->peer.spec, line);
    }
    if (small != best && small->mem_bytes < best->mem_bytes * 0.8) {
        char m[24];
        tkb_adv_bytes_text(m, sizeof m, small->mem_bytes);
        printf("  Choose %s if memory matters more: %s instead of ", small->peer.spec, m);
        tkb_adv_bytes_text(m, sizeof m, best->mem_bytes);
        printf("%s.\n", m);
    }
    if (best->late_src == ADV_SRC_MODEL_TICK || best->late_src == ADV_SRC_NONE)
        printf("  Its lateness is modelled without the machine's wake-up latency: run `tkbench run "
               "--suite quick` (the floor) or `tkbench replay %s --level executor --peers %s` and "
               "pass the folder with --results.\n",
               trace_path, best->peer.spec);
}

int tkb_adv_report(const tkb_advice *a) {
    print_table(a->cs, a->nc);
    print_sources(a->wake_ns, a->dir, a->reps);
    if (a->dir != NULL) {
        size_t from_dir = 0;
        for (size_t i = 0; i < a->nc; i++)
            from_dir +=
                a->cs[i].late_src == ADV_SRC_DIR_REPLAY || a->cs[i].late_src == ADV_SRC_DIR_W3;
        if (from_dir == 0)
            fprintf(stderr,
                    "tkbench: advise: note: %s has no lateness of these candidates (%s:%s or %s "
                    "of the same specs): their lateness is modelled\n",
                    a->dir, tkb_wl_replay_exec.name, a->t->name, tkb_wl_w3_latency.name);
    }
    recommend(a->cs, a->nc, a->crit, &a->needs, a->t->name, a->trace_path);
    return a->nc == 0 || a->cs[0].excluded[0] != '\0' ? 1 : 0;
}
