/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "fwd.h"

const struct egw_fwd_engine *const egw_fwd_engines[] = {
	&egw_fwd_io, &egw_fwd_mac, &egw_fwd_rxonly, &egw_fwd_replay, &egw_fwd_gateway, NULL,
};

const struct egw_fwd_engine *
egw_fwd_find(const char *name)
{
	unsigned int i;

	for (i = 0; egw_fwd_engines[i] != NULL; i++)
		if (strcmp(egw_fwd_engines[i]->name, name) == 0)
			return egw_fwd_engines[i];
	return NULL;
}

int
egw_fwd_select(const char *spec, char *err, size_t errlen)
{
	const struct egw_fwd_engine *e;
	char name[32];
	const char *args;
	size_t n;
	int rc;

	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
		snprintf(err, errlen, "forwarding is running: stop it first");
		return -EBUSY;
	}
	while (*spec == ' ' || *spec == '\t')
		spec++;
	n = strcspn(spec, " \t");
	if (n == 0 || n >= sizeof(name)) {
		snprintf(err, errlen, "no engine name");
		return -EINVAL;
	}
	memcpy(name, spec, n);
	name[n] = '\0';
	args = spec + n;
	while (*args == ' ' || *args == '\t')
		args++;
	e = egw_fwd_find(name);
	if (e == NULL) {
		snprintf(err, errlen, "unknown engine '%s' (engines: io mac rxonly replay gateway)",
			 name);
		return -EINVAL;
	}
	if (e->configure == NULL) {
		if (*args != '\0') {
			snprintf(err, errlen, "engine '%s' takes no arguments", name);
			return -EINVAL;
		}
	} else {
		rc = e->configure(args, err, errlen);
		if (rc < 0)
			return rc;
	}
	egw.engine = e;
	return 0;
}
