/// `revalidate`: a phone that reopens conversations it already holds. Each
/// user holds the newest page of a few random conversations with its
/// `ETag`, and reopens one after another, sending `If-None-Match`: a 304
/// when nothing changed (nothing re-sent, nothing re-checked), else the new
/// page, checked and held. With `--no-etag` it re-reads them unconditionally
/// (the same row without revalidation, to compare).
final class RevalidateUser: CallbackUser {
    /// How many conversations one user holds.
    static let held = 8

    private var entries: [ConversationCatalog.Entry] = []
    private var etags: [String: String] = [:]
    private var steps = 0

    func run(_ context: UserContext) {
        if entries.isEmpty {
            let candidates = context.catalog.nonEmpty
            guard !candidates.isEmpty else { return }
            entries = (0..<Self.held).map { _ in context.randomEntry(from: candidates) }
        }
        let entry = entries[steps % entries.count]
        let label = "revalidate \(entry.id)"
        context.revalidatePage(entry, .newest, limit: context.settings.pageSize, label: label,
                               etag: etags[entry.id]) { [self] status, etag, _ in
            if status == 200 || status == 304 { etags[entry.id] = etag }
            steps += 1
            if steps % 64 == 0 { context.flush() }
            run(context)
        }
    }
}
