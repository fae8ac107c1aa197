-- A conversation's membership counter: +1 in the transaction of every
-- member added, role changed or member removed (the writer's member
-- writes, SQLiteWriter+Members.swift: the only statements that change
-- `members`). A reader that cached a member's role with the counter it read
-- can trust the role exactly while the counter, read in its own snapshot,
-- is the same (SQLiteMemberRoleCache). Not a trigger: the store's
-- connections run with triggers off (a file from elsewhere must not run
-- code on the writer).
-- Never edit this file once shipped: add 0008_*.sql instead.
ALTER TABLE conversations ADD COLUMN members_version INTEGER NOT NULL DEFAULT 0;
