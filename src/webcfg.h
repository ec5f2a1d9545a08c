/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's web configuration: TLS and HTTP basic auth from a file in
 * the Prometheus exporter-toolkit format (--web.config.file).
 *
 *   struct webcfg *w;
 *   err = webcfg__load(path, &w, msg, sizeof(msg));    one-line msg on error
 *   webcfg__mhd_options(w, items, n);                  TLS options for MHD
 *   webcfg__conn_started(w, conn);                     mTLS policy, per connection
 *   status = webcfg__authorize(w, conn);              0, 401 or 403, per request
 *   webcfg__free(w);
 *
 * Certificates and keys are read (and checked with GnuTLS) at load time, so
 * a bad file is reported before any BPF program is loaded and the files
 * need not stay readable after privileges are dropped. Only regular files
 * are read (a FIFO would hang the start), one YAML document, nested at most
 * 16 deep, each key once, bcrypt cost at most 14. Passwords are
 * checked with crypt(3) (libxcrypt: bcrypt $2a$/$2b$/$2y$ hashes); a
 * successful check is remembered as an HMAC under a per-process random key,
 * so a scraper pays the bcrypt cost once, not per scrape.
 */
#ifndef DEVMEMTOP_WEBCFG_H
#define DEVMEMTOP_WEBCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

struct webcfg;

/* 0 or -errno; on error msg names the file, line and field. */
int webcfg__load(const char *path, struct webcfg **out, char *msg, size_t msglen);
void webcfg__free(struct webcfg *w);
/*
 * One line to print at the start (an expired or not yet valid server
 * certificate), or NULL. Control characters are escaped.
 */
const char *webcfg__warning(const struct webcfg *w);

bool webcfg__tls(const struct webcfg *w);
/* Clients must authenticate: basic auth users, or verified client certs. */
bool webcfg__auth(const struct webcfg *w);
/*
 * Fills items with the TLS options (certificate, key, client CA, protocol
 * versions), terminated by MHD_OPTION_END; n must be >= 6. Returns the MHD
 * flags to add (MHD_USE_TLS or 0).
 */
unsigned int webcfg__mhd_options(const struct webcfg *w, struct MHD_OptionItem *items,
				 size_t n);
/* Per new connection (before its handshake): ask for / require client certs. */
void webcfg__conn_started(const struct webcfg *w, struct MHD_Connection *c);
/*
 * A request's client: 0 when allowed (no users configured, or basic auth
 * matches), MHD_HTTP_UNAUTHORIZED, or MHD_HTTP_FORBIDDEN when the client
 * certificate the policy wants is missing or does not verify (the
 * handshake refuses that already; this is the second check).
 */
int webcfg__authorize(struct webcfg *w, struct MHD_Connection *c);

#endif /* DEVMEMTOP_WEBCFG_H */
