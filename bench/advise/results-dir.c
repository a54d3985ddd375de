/* SPDX-License-Identifier: MIT */
/* tkbench advise: what a results folder of this machine knows about the
 * candidates (advise.h): the p99 lateness of a peer in the replay of this
 * trace (replay_exec) or in the W3 latency workload, and the floor's sleep
 * lateness, the wake-up a modelled lateness adds. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "advise/advise.h"
#include "output/output.h"
#include "util.h"

/* Is this a row advise reads? */
static bool row_usable(const adv_row *r) {
    size_t nr = strlen(tkb_wl_replay_exec.name);
    return (strcmp(r->metric, ADV_LATE_P99) == 0 &&
            (strcmp(r->workload, tkb_wl_w3_latency.name) == 0 ||
             (strncmp(r->workload, tkb_wl_replay_exec.name, nr) == 0 && r->workload[nr] == ':'))) ||
           (strcmp(r->workload, tkb_wl_floor.name) == 0 && strcmp(r->metric, ADV_WAKE_P99) == 0);
}

int tkb_adv_rows_read(const char *dir, adv_rows *out) {
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "tkbench: advise: --results %s: not a folder\n", dir);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "tkbench: advise: cannot read %s: %s: not a results folder\n", path,
                strerror(errno));
        return 2;
    }
    char *line = NULL;
    size_t lcap = 0, lineno = 0, rows = 0;
    int status = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        char *fld[8];
        int nf = tkb_csv_split(line, fld, 8);
        if (lineno == 1) {
            if (nf < 6 || strcmp(fld[0], "peer") != 0 || strcmp(fld[1], "workload") != 0 ||
                strcmp(fld[3], "metric") != 0 || strcmp(fld[4], "value") != 0) {
                fprintf(stderr,
                        "tkbench: advise: %s:1: not the header peer,workload,n,metric,value,...\n",
                        path);
                status = 2;
                break;
            }
            continue;
        }
        if (nf == 1 && fld[0][0] == '\0')
            continue;
        char *end;
        double v = nf >= 6 ? strtod(fld[4], &end) : NAN;
        if (nf < 6 || end == fld[4] || *end != '\0') {
            fprintf(stderr, "tkbench: advise: %s:%zu: expected peer,workload,n,metric,value,unit\n",
                    path, lineno);
            status = 2;
            break;
        }
        rows++;
        adv_row r = {.value = v};
        snprintf(r.workload, sizeof r.workload, "%s", fld[1]);
        snprintf(r.metric, sizeof r.metric, "%s", fld[3]);
        if (!row_usable(&r) || !isfinite(v))
            continue;
        tkb_peer p;
        char err[256];
        snprintf(r.peer, sizeof r.peer, "%s",
                 tkb_peer_parse(fld[0], &p, err, sizeof err) == 0 ? p.spec : fld[0]);
        if (out->n == out->cap) {
            size_t nc = out->cap ? 2 * out->cap : 64;
            adv_row *nv = realloc(out->v, nc * sizeof *nv);
            if (nv == NULL) {
                fprintf(stderr, "tkbench: advise: out of memory\n");
                status = 2;
                break;
            }
            out->v = nv;
            out->cap = nc;
        }
        out->v[out->n++] = r;
    }
    free(line);
    fclose(f);
    if (status == 0 && out->n == 0) {
        fprintf(stderr,
                "tkbench: advise: %s has %zu rows but none advise can use (%s of %s:<trace> or "
                "%s, or %s of %s)\n",
                path, rows, ADV_LATE_P99, tkb_wl_replay_exec.name, tkb_wl_w3_latency.name,
                ADV_WAKE_P99, tkb_wl_floor.name);
        status = 2;
    }
    return status;
}

double tkb_adv_rows_median(const adv_rows *d, const char *peer, const char *workload,
                           const char *metric) {
    double *v = malloc((d->n ? d->n : 1) * sizeof *v);
    if (v == NULL)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if ((peer == NULL || strcmp(d->v[i].peer, peer) == 0) &&
            strcmp(d->v[i].workload, workload) == 0 && strcmp(d->v[i].metric, metric) == 0)
            v[k++] = d->v[i].value;
    double m = tkb_median(v, k);
    free(v);
    return m;
}
