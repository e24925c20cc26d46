/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration setters. Each validates everything before it writes, so a
 * refused call leaves the configuration as it was. egw_pppoe_init() resets
 * the configuration to its defaults; the setters work before and after it,
 * except set_limits, whose bound is the table size init chooses.
 *
 * Sessions already up keep what they negotiated: a new MRU, MSS clamp,
 * keepalive or authentication applies to sessions that start afterwards.
 */
#include <errno.h>
#include <string.h>

#include "pppoe_private.h"

/* Largest per-MAC limit: every session id (RFC 2516 reserves 0 and 0xFFFF). */
#define PER_MAC_MAX 65534
#define KEEPALIVE_MAX_S 3600
#define AUTH_HOLD_MAX_S 86400
#define KEEPALIVE_MISSES_MAX 255
/* RFC 1122 default MSS (536) up to what the largest MRU carries over IPv4. */
#define MSS_MIN 536
#define MSS_MAX (EGW_PPPOE_MRU_MAX - 40)
/* RFC 1661: every implementation takes 1500; below RFC 791's 576 IPv4 breaks. */
#define MRU_MIN 576

/* Length of a name, or 0 if it is NULL, empty or longer than EGW_PPPOE_NAME_MAX. */
static size_t
name_len(const char *name)
{
	size_t n;

	if (name == NULL)
		return 0;
	n = strnlen(name, EGW_PPPOE_NAME_MAX + 1);
	return n > EGW_PPPOE_NAME_MAX ? 0 : n;
}

int
egw_pppoe_set_ac_name(const char *name)
{
	size_t n = name_len(name);

	if (n == 0)
		return -EINVAL;
	memcpy(pppoe_g.conf.ac_name, name, n);
	pppoe_g.conf.ac_name[n] = '\0';
	return 0;
}

static int
service_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < pppoe_g.conf.nb_services; i++)
		if (strcmp(pppoe_g.conf.services[i], name) == 0)
			return (int)i;
	return -1;
}

int
egw_pppoe_service_add(const char *name)
{
	struct pppoe_conf *c = &pppoe_g.conf;
	size_t n = name_len(name);

	/* the empty name means "any service" in a request: nothing to add */
	if (n == 0)
		return -EINVAL;
	if (service_index(name) >= 0)
		return -EEXIST;
	if (c->nb_services == PPPOE_MAX_SERVICES)
		return -ENOSPC;
	memcpy(c->services[c->nb_services], name, n);
	c->services[c->nb_services][n] = '\0';
	c->nb_services++;
	return 0;
}

int
egw_pppoe_service_del(const char *name)
{
	struct pppoe_conf *c = &pppoe_g.conf;
	int i;

	if (name_len(name) == 0)
		return -ENOENT;
	i = service_index(name);
	if (i < 0)
		return -ENOENT;
	/* keep the order: PADOs list the services as configured */
	memmove(c->services[i], c->services[i + 1],
		(c->nb_services - (unsigned int)i - 1) * sizeof(c->services[0]));
	c->nb_services--;
	memset(c->services[c->nb_services], 0, sizeof(c->services[0]));
	return 0;
}

int
egw_pppoe_set_dns(rte_be32_t primary, rte_be32_t secondary)
{
	pppoe_g.conf.dns[0] = primary;
	pppoe_g.conf.dns[1] = secondary;
	return 0;
}

int
egw_pppoe_set_limits(unsigned int sessions, unsigned int per_mac)
{
	if (sessions == 0 || sessions > pppoe_g.table_size || per_mac == 0 || per_mac > PER_MAC_MAX)
		return -EINVAL;
	pppoe_g.conf.max_sessions = sessions;
	pppoe_g.conf.max_per_mac = per_mac;
	return 0;
}

int
egw_pppoe_set_guard(const struct egw_pppoe_guard *g)
{
	struct pppoe_conf *c = &pppoe_g.conf;
	const unsigned int rates[] = {g->padi_rate, g->padi_rate_mac, g->padr_rate,
				      g->padr_rate_mac};
	unsigned int i;

	if (g->max_starting == 0 || g->max_starting > pppoe_g.table_size || g->auth_hold_s == 0 ||
	    g->auth_hold_s > AUTH_HOLD_MAX_S)
		return -EINVAL;
	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i] == 0 || rates[i] > EGW_PPPOE_DISC_RATE_MAX)
			return -EINVAL;
	c->max_starting = g->max_starting;
	c->padi_rate = g->padi_rate;
	c->padi_rate_mac = g->padi_rate_mac;
	c->padr_rate = g->padr_rate;
	c->padr_rate_mac = g->padr_rate_mac;
	c->auth_hold_s = g->auth_hold_s;
	/* the buckets of all clients start full at their new rates */
	pppoe_disc_guard_reset();
	return 0;
}

int
egw_pppoe_set_mru(uint16_t mru)
{
	if (mru < MRU_MIN || mru > EGW_PPPOE_MRU_MAX)
		return -EINVAL;
	pppoe_g.conf.mru = mru;
	return 0;
}

int
egw_pppoe_set_mss_clamp(enum egw_pppoe_mss_mode mode, uint16_t value)
{
	switch (mode) {
	case EGW_PPPOE_MSS_AUTO:
	case EGW_PPPOE_MSS_OFF: value = 0; break;
	case EGW_PPPOE_MSS_FIXED:
		if (value < MSS_MIN || value > MSS_MAX)
			return -EINVAL;
		break;
	default: return -EINVAL;
	}
	pppoe_g.conf.mss_mode = mode;
	pppoe_g.conf.mss_value = value;
	return 0;
}

int
egw_pppoe_set_keepalive(unsigned int interval_s, unsigned int misses)
{
	if (interval_s > KEEPALIVE_MAX_S || misses == 0 || misses > KEEPALIVE_MISSES_MAX)
		return -EINVAL;
	pppoe_g.conf.keepalive_s = interval_s;
	pppoe_g.conf.keepalive_misses = misses;
	return 0;
}

int
egw_pppoe_set_auth(enum egw_pppoe_auth auth)
{
	switch (auth) {
	case EGW_PPPOE_AUTH_PAP:
	case EGW_PPPOE_AUTH_CHAP:
	case EGW_PPPOE_AUTH_NONE: pppoe_g.conf.auth = auth; return 0;
	default: return -EINVAL;
	}
}

void
egw_pppoe_config_get(struct egw_pppoe_config *cfg)
{
	const struct pppoe_conf *c = &pppoe_g.conf;

	memset(cfg, 0, sizeof(*cfg));
	memcpy(cfg->ac_name, c->ac_name, sizeof(cfg->ac_name));
	cfg->nb_services = c->nb_services;
	pppoe_pool_count(&cfg->nb_pools4, &cfg->nb_pools6);
	cfg->nb_users = ppp_users_count();
	cfg->dns[0] = c->dns[0];
	cfg->dns[1] = c->dns[1];
	cfg->max_sessions = c->max_sessions;
	cfg->max_per_mac = c->max_per_mac;
	cfg->guard.max_starting = c->max_starting;
	cfg->guard.padi_rate = c->padi_rate;
	cfg->guard.padi_rate_mac = c->padi_rate_mac;
	cfg->guard.padr_rate = c->padr_rate;
	cfg->guard.padr_rate_mac = c->padr_rate_mac;
	cfg->guard.auth_hold_s = c->auth_hold_s;
	cfg->idle_timeout_s = pppoe_policy_idle_s();
	cfg->mru = c->mru;
	cfg->mss_mode = c->mss_mode;
	cfg->mss_value = c->mss_value;
	cfg->keepalive_s = c->keepalive_s;
	cfg->keepalive_misses = c->keepalive_misses;
	cfg->auth = c->auth;
}

void
egw_pppoe_services_walk(void (*fn)(const char *name, void *arg), void *arg)
{
	unsigned int i;

	for (i = 0; i < pppoe_g.conf.nb_services; i++)
		fn(pppoe_g.conf.services[i], arg);
}
