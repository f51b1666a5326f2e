/* SPDX-License-Identifier: GPL-2.0-only */
/* Docker Engine's daemon.json (wiring_docker.c). */
#ifndef SH_WIRING_DOCKER_H
#define SH_WIRING_DOCKER_H

#include "lib/error.h"

/* The runtime Docker registers, and the command it runs. */
#define SH_DOCKER_RUNTIME "sockopt"
#define SH_DOCKER_DAEMON_JSON "/etc/docker/daemon.json"

struct sh_config;
struct wiring_hook;
struct wiring_opts;
struct wiring_plan;

int wiring_docker_configure(const struct wiring_opts *o,
			    const struct wiring_hook *hook,
			    const struct sh_config *cfg,
			    struct wiring_plan *plan, struct sh_error *err);
int wiring_docker_unconfigure(const struct wiring_opts *o,
			      struct wiring_plan *plan, struct sh_error *err);

#endif /* SH_WIRING_DOCKER_H */
