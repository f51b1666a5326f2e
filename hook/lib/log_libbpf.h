/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_LOG_LIBBPF_H
#define SH_LOG_LIBBPF_H

/* From now on, libbpf's warnings and information are debug lines in our
 * log, and its debug output is dropped (about 130 lines per load). */
void log_libbpf_route(void);

#endif /* SH_LOG_LIBBPF_H */
