/* A NULL configuration means the defaults, for every create and open of
 * the library (docs/library.md). */
#ifndef IMC_UTIL_CONFIG_H
#define IMC_UTIL_CONFIG_H

/* cfg, or, when it is NULL, def (a local of the config's type) filled by
 * init, the config's *_config_init(). */
#define IMC_CONFIG_OR_DEFAULT(cfg, def, init) \
	((cfg) ? (cfg) : (init(&(def)), &(def)))

#endif
