-- The conversation's row keeps its newest message's created_at, so a
-- writer knows the floor of the next message's time from the row it locks.
-- Created times never decrease in id order within a conversation (a jump
-- by time's first message by time is then its smallest id: 0004's
-- messages_by_time): an append stamped by an instance whose clock is
-- behind the newest message's takes that message's time instead. Until
-- now each appended row found that time with a descent of the primary key
-- inside its INSERT, a subquery per row and a tenth of PostgreSQL's time
-- per append (docs/performance.md, "The creation floor in the
-- conversation's row").
--
-- Written by every statement that moves newest_id, from the same values:
-- the batch's counters (PostgresBatch.countersWriteBackSQL) and the bulk
-- loads. NULL: the conversation holds no message (its floor is 0). Read
-- with the conversation's lock (FOR UPDATE at READ COMMITTED reads the
-- row as the last writer committed it), so the floor is the time of the
-- newest message committed. Not indexed: the row's update stays as it was.
-- Instances of an older build do not write it: upgrade every instance
-- together, as 0003 already asks.
-- Never edit this file once shipped: add 0008_*.sql instead.
ALTER TABLE conversations ADD COLUMN newest_created_at bigint;

-- The latest time stored, one seek on messages_by_time each: rows a bulk
-- load wrote before this migration were not held to the floor.
UPDATE conversations AS c
SET newest_created_at = (SELECT m.created_at FROM messages AS m
                         WHERE m.conversation_seq = c.seq ORDER BY m.created_at DESC LIMIT 1)
WHERE c.newest_id IS NOT NULL;
