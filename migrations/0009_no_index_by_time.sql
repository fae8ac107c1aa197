-- Jump by time finds its anchor by a binary search over the conversation's
-- ids, one rowid seek a step (SQLiteReads.firstMessage): the writer keeps
-- created_at non-decreasing in id order within a conversation, so the
-- messages created at or after a time are its newest ones. The index by
-- time cost every append a leaf page written and checkpointed, about a
-- quarter of an append's bytes (docs/performance.md, "Appends without the
-- index by time").
-- Never edit this file once shipped: add 0010_*.sql instead.
DROP INDEX messages_by_time;
