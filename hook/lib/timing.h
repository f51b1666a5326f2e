/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a hook run's time goes: named steps, measured from main(). With
 * OCI_SOCKOPT_HOOK_TIMING=1 in the environment the steps are printed as
 * one line on stderr (for benchmarks and profiling), else logged at debug.
 */
#ifndef SH_TIMING_H
#define SH_TIMING_H

void timing_start(void);
/* Ends a step: the time since the previous mark is charged to step. */
void timing_mark(const char *step);
void timing_report(const char *command);
/* Seconds since timing_start(): the run's latency so far. */
double timing_elapsed(void);

#endif /* SH_TIMING_H */
