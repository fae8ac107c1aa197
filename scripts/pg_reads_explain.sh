#!/bin/bash
# The PostgreSQL read path's statements on a large data set, as the server
# runs them: a throwaway PostgreSQL 15 cluster with the store's schema
# (migrations/postgres), one conversation of 1,000,000 messages and a user
# in 10,000 conversations; each statement prepared, run six times (so the
# cached plan is the one kept after PostgreSQL's five custom plans), then
# EXPLAIN (ANALYZE, BUFFERS). Prints the shared buffers each touched and
# its server-side execution time.
#
# The statements below are copies of PostgresReads' SQL (Sources/
# HistoryPostgres/Store/PostgresReads*.swift, PostgresUnread.swift) as of
# this script's commit: keep them in step when those change.
#
# Usage (as root, the cluster runs as the postgres user): scripts/pg_reads_explain.sh
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
WORK=$(mktemp -d /tmp/pg-reads-explain.XXXXXX)
DIR=$WORK/data
SOCK=$WORK
ROOT=$(cd "$(dirname "$0")/.." && pwd)
chown postgres "$WORK"
su postgres -c "$BIN/initdb -D $DIR -A trust -U postgres" >/dev/null
su postgres -c "$BIN/pg_ctl -D $DIR -o '-k $SOCK -c listen_addresses= -p 54329' -l $SOCK/log start -w" >/dev/null
trap 'su postgres -c "$BIN/pg_ctl -D $DIR stop -m fast" >/dev/null; rm -rf "$WORK"' EXIT
SQL_descending=$(cat <<'STATEMENT'
WITH c AS (
    SELECT conversations.seq, conversations.title, conversations.created_at, conversations.message_count, conversations.oldest_id, conversations.newest_id, conversations.version FROM conversations WHERE id = $1::text)
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to, m.client_id, m.version FROM c
LEFT JOIN LATERAL (SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
WHERE conversation_seq = c.seq AND id < $2::bigint ORDER BY id DESC LIMIT $3::bigint) AS m ON true
STATEMENT
)
SQL_ascending=$(cat <<'STATEMENT'
WITH c AS (
    SELECT conversations.seq, conversations.title, conversations.created_at, conversations.message_count, conversations.oldest_id, conversations.newest_id, conversations.version FROM conversations WHERE id = $1::text)
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to, m.client_id, m.version FROM c
LEFT JOIN LATERAL (SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
WHERE conversation_seq = c.seq AND id > $2::bigint AND id < $3::bigint ORDER BY id LIMIT $4::bigint) AS m ON true
STATEMENT
)
SQL_around=$(cat <<'STATEMENT'
WITH c AS (
    SELECT conversations.seq, conversations.title, conversations.created_at, conversations.message_count, conversations.oldest_id, conversations.newest_id, conversations.version FROM conversations WHERE id = $1::text)
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to, m.client_id, m.version FROM c
LEFT JOIN LATERAL ((SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
 WHERE conversation_seq = c.seq AND id < $2::bigint ORDER BY id DESC LIMIT $3::bigint)
UNION ALL
(SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
 WHERE conversation_seq = c.seq AND id = $2::bigint)
UNION ALL
(SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
 WHERE conversation_seq = c.seq AND id > $2::bigint ORDER BY id LIMIT $3::bigint)) AS m ON true
STATEMENT
)
SQL_window=$(cat <<'STATEMENT'
WITH c AS (
    SELECT conversations.seq, conversations.title, conversations.created_at, conversations.message_count, conversations.oldest_id, conversations.newest_id, conversations.version FROM conversations WHERE id = $1::text)
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to, m.client_id, m.version, ahead.above FROM c
CROSS JOIN LATERAL (
    SELECT count(*) AS above FROM (
        SELECT 1 FROM messages WHERE conversation_seq = c.seq AND id > $2::bigint
        ORDER BY id LIMIT $4::bigint + 1) AS counted
) AS ahead
LEFT JOIN LATERAL (
    (SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
     WHERE conversation_seq = c.seq AND id > $2::bigint AND ahead.above <= $4::bigint
     ORDER BY id LIMIT $3::bigint)
    UNION ALL
    (SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
     WHERE conversation_seq = c.seq AND ahead.above > $4::bigint
     ORDER BY id DESC LIMIT $3::bigint)
) AS m ON true
STATEMENT
)
SQL_changes=$(cat <<'STATEMENT'
WITH c AS (
    SELECT conversations.seq, conversations.title, conversations.created_at, conversations.message_count, conversations.oldest_id, conversations.newest_id, conversations.version FROM conversations WHERE id = $1::text)
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, m.id, m.sender, m.body, m.created_at, m.edited_at, m.deleted, m.reply_to, m.client_id, m.version, m.created_version FROM c
LEFT JOIN LATERAL (
    SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version, messages.created_version FROM messages
    WHERE conversation_seq = c.seq AND version > $2::bigint AND id + 0 >= $3::bigint AND id + 0 <= $4::bigint
    ORDER BY version LIMIT $5::bigint
) AS m ON true
STATEMENT
)
SQL_unread=$(cat <<'STATEMENT'
SELECT count(*) AS unread_count, min(id) AS first_unread FROM (
    SELECT id FROM messages
    WHERE conversation_seq = $1::bigint AND id > coalesce($2::bigint, 0) AND NOT deleted AND sender <> $3::text
    ORDER BY id LIMIT $4::bigint) AS unread
STATEMENT
)
SQL_count=$(cat <<'STATEMENT'
SELECT (SELECT value FROM activity_counter WHERE id = 1),
       (SELECT count(*) FROM (SELECT 1 FROM members WHERE user_id = $1::text LIMIT $2::bigint) AS counted)
STATEMENT
)
SQL_walk=$(cat <<'STATEMENT'
SELECT conversations.seq, conversations.newest_id,
       coalesce((SELECT true FROM members
          WHERE members.conversation_seq = conversations.seq AND members.user_id = $1::text LIMIT 1), false)
FROM conversations WHERE newest_id < $2::bigint ORDER BY newest_id DESC LIMIT $3::bigint
STATEMENT
)
SQL_rows=$(cat <<'STATEMENT'
SELECT c.seq, c.title, c.created_at, c.message_count, c.oldest_id, c.newest_id, c.version, c.id, c.activity,
       m.role, m.last_read_id, m.activity,
       last.id, last.sender, last.body, last.created_at, last.edited_at, last.deleted, last.reply_to, last.client_id, last.version,
       unread.unread_count, unread.first_unread
FROM conversations AS c
CROSS JOIN LATERAL (
    SELECT role, last_read_id, activity FROM members
    WHERE conversation_seq = c.seq AND user_id = $1::text LIMIT 1
) AS m
LEFT JOIN LATERAL (
    SELECT messages.id, messages.sender, messages.body, messages.created_at, messages.edited_at, messages.deleted, messages.reply_to, messages.client_id, messages.version FROM messages
    WHERE conversation_seq = c.seq AND id = c.newest_id LIMIT 1
) AS last ON true
CROSS JOIN LATERAL (SELECT count(*) AS unread_count, min(id) AS first_unread FROM (
    SELECT id FROM messages
    WHERE conversation_seq = c.seq AND id > coalesce(m.last_read_id, 0) AND NOT deleted AND sender <> $1::text
    ORDER BY id LIMIT $3::bigint) AS unread) AS unread
WHERE c.seq = ANY ($2::bigint[])
STATEMENT
)
SQL_memberships=$(cat <<'STATEMENT'
SELECT conversations.seq, conversations.newest_id, conversations.id FROM members
JOIN conversations ON conversations.seq = members.conversation_seq
WHERE members.user_id = $1::text LIMIT $2::bigint
STATEMENT
)
P="psql -h $SOCK -p 54329 -U postgres -d postgres -v ON_ERROR_STOP=1 -q"
cat "$ROOT"/migrations/postgres/*.sql | $P
$P <<'SQL'
INSERT INTO conversations (id, created_at) VALUES ('big', 0);
INSERT INTO conversations (id, created_at) SELECT 'c-' || n, 0 FROM generate_series(1, 10000) n;
INSERT INTO conversations (id, created_at) SELECT 'other-' || n, 0 FROM generate_series(1, 5000) n;
INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version)
  SELECT 1, nextval('message_ids'), 'user-' || (n % 10), repeat('x', 120), n, n, n FROM generate_series(1, 1000000) n;
INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version)
  SELECT seq, nextval('message_ids'), 'user-' || (k % 10), repeat('y', 120), k, k, k
  FROM (SELECT seq, k FROM conversations, generate_series(1, 3) k WHERE seq > 1 ORDER BY seq, k) s;
UPDATE conversations SET message_count = x.n, version = x.n, oldest_id = x.lo, newest_id = x.hi, activity = conversations.seq
  FROM (SELECT conversation_seq, count(*) n, min(id) lo, max(id) hi FROM messages GROUP BY 1) x WHERE x.conversation_seq = seq;
UPDATE activity_counter SET value = (SELECT max(seq) FROM conversations);
INSERT INTO members (conversation_seq, user_id, role, joined_at) SELECT seq, 'u', 'member', 0 FROM conversations WHERE seq <= 10001;
INSERT INTO members (conversation_seq, user_id, role, joined_at) SELECT seq, 'p' || (seq % 3000) || '-' || k, 'member', 0
  FROM conversations, generate_series(1, 3) k;
VACUUM ANALYZE;
SQL
explain() { # name statement args
  local name=$1 file=SQL_$2 args=$3
  echo "== $name ($args)"
  $P <<SQL | grep -E "Execution Time|Buffers: shared" | sed -n "1p;\$p" | tr -s " " | paste -sd " "
PREPARE s AS ${!file};
-- the plan a cached statement settles on (five custom runs first)
EXECUTE s($args); EXECUTE s($args); EXECUTE s($args); EXECUTE s($args); EXECUTE s($args); EXECUTE s($args);
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE s($args);
SQL
}
DEEP=$($P -At -c "SELECT id FROM messages WHERE conversation_seq = 1 ORDER BY id OFFSET 1000 LIMIT 1")
SEQS=$($P -At -c "SELECT '{' || string_agg(seq::text, ',') || '}' FROM (SELECT seq FROM conversations WHERE seq BETWEEN 2 AND 10001 ORDER BY newest_id DESC LIMIT 51) s")
explain "newest page, 1M-message conversation" descending "'big', 9223372036854775807, 50"
explain "before page 1,000 messages from the start" descending "'big', $DEEP, 50"
explain "after page 1,000 messages from the start" ascending "'big', $DEEP, 9223372036854775807, 50"
explain "around 1,000 from the start" around "'big', $DEEP, 50"
explain "after+window 10,000, reset (999,000 above)" window "'big', $DEEP, 50, 10000"
explain "change feed since 999,000" changes "'big', 999000, 1, 9223372036854775807, 101"
explain "unread, capped (marker 1,000 from the start)" unread "1, $DEEP, 'u', 1000"
explain "inbox: activity + membership count (u: 10,001)" count "'u', 257"
explain "inbox: walk, first chunk (102)" walk "'u', 9223372036854775807, 102"
explain "inbox: the 50 rows (+1) of the page" rows "'u', '$SEQS', 1000"
explain "inbox fallback for reference: all memberships" memberships "'u', 9223372036854775807"
