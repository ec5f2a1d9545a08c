/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's web configuration: TLS and HTTP basic auth from a file in
 * the Prometheus exporter-toolkit format (--web.config.file).
 *
 *   struct webcfg *w;
 *   err = webcfg__load(path, &w, msg, sizeof(msg));    one-line msg on error
 *   webcfg__mhd_options(w, items, n);                  TLS options for MHD
 *   webcfg__conn_started(w, conn);                     mTLS policy, per connection
 *   webcfg__start(w, MHD_resume_connection);         the password checker thread
 *   status = webcfg__authorize(w, conn, &job);        0, 401, 403, 429 or pending
 *   webcfg__free(w);
 *
 * Certificates and keys are read (and checked with GnuTLS) at load time, so
 * a bad file is reported before any BPF program is loaded and the files
 * need not stay readable after privileges are dropped. Only regular files
 * are read (a FIFO would hang the start), one YAML document, nested at most
 * 16 deep, each key once, bcrypt cost at most 14. Passwords are
 * checked with crypt(3) (libxcrypt: bcrypt $2a$/$2b$/$2y$ hashes); a
 * successful check is remembered as an HMAC under a per-process random key,
 * so a scraper pays the bcrypt cost once, not per scrape; checks run on a
 * thread of their own with a per-address failure budget (webcfg.c).
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
 * Password checks on a thread of their own (after the privilege drop):
 * resume(c) is called from it when the check of a suspended connection is
 * done. Without it webcfg__authorize() checks inline. stop: checks not
 * started end with 503, every suspended connection is resumed, the thread
 * joined (before MHD_stop_daemon()).
 */
int webcfg__start(struct webcfg *w, void (*resume)(struct MHD_Connection *c));
void webcfg__stop(struct webcfg *w);

#define WEBCFG_PENDING	1
struct webcfg_job;
/*
 * A request's client: 0 when allowed (no users configured, or basic auth
 * matches a password checked before), MHD_HTTP_UNAUTHORIZED,
 * MHD_HTTP_FORBIDDEN when the client certificate the policy wants is
 * missing or does not verify (the handshake refuses that already; this
 * is the second check), MHD_HTTP_TOO_MANY_REQUESTS when the client's
 * address must wait before its next password check, 503 when out of
 * memory or stopping, or WEBCFG_PENDING: *job is queued; suspend the
 * connection, and once resumed take webcfg__job_status(*job) (0 or 401)
 * and webcfg__job_free() it.
 */
int webcfg__authorize(struct webcfg *w, struct MHD_Connection *c, struct webcfg_job **job);
int webcfg__job_status(const struct webcfg_job *j);
void webcfg__job_free(struct webcfg_job *j);

#endif /* DEVMEMTOP_WEBCFG_H */
