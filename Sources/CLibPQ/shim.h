#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// Debian's libpq-dev puts the header under /usr/include/postgresql, which is
// not on the default search path; pkg-config "libpq" adds it.
#include <libpq-fe.h>

/// PG_DIAG_SQLSTATE and its neighbours are character-literal macros ('C',
/// 'M', ...) from postgres_ext.h; these hand them to Swift as plain ints for
/// PQresultErrorField, without relying on how a character literal imports.
static inline int clibpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int clibpq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int clibpq_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int clibpq_diag_severity(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
static inline int clibpq_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }
#endif
