/// A reader connection of `SQLiteReaderPool` with what it remembers between
/// reads. Like the connection, it is used by one thread at a time (the one
/// that checked it out), so nothing in it needs a lock.
final class SQLiteReader {
    let connection: SQLiteConnection
    let seqs = ConversationSeqCache()
    let roles = SQLiteMemberRoleCache()

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }
}
