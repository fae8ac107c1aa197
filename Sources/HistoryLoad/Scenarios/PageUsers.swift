/// `deep`: random `before` pages at any depth of the largest conversation.
///
/// Every fourth page is read again as a range page (`after=<first-1>&before=<cursor>`),
/// another query shape over the same ids: the two must agree exactly.
final class DeepUser: CallbackUser {
    private var span = KnownSpan()
    private var steps = 0

    func run(_ context: UserContext) {
        guard let entry = context.catalog.largest, let oldest = entry.oldestID, let newest = entry.newestID else { return }
        let limit = context.settings.pageSize
        let cursor = Int64.random(in: (oldest + 1)...(newest + 1), using: &context.random)
        let label = "deep \(entry.id)"
        context.fetchPage(entry, .before(cursor), limit: limit, label: label) { [self] coverage in
            guard let coverage else { return run(context) }
            if !context.page.ids.isEmpty, cursor <= newest, !context.page.hasNewer {
                context.log.violation(.pageFields, "\(label) before=\(cursor): has_newer false below the known newest id \(newest)")
            }
            steps += 1
            if steps % 64 == 0 { context.flush() }
            guard steps % 4 == 0, let first = context.page.ids.first, first > 1 else { return run(context) }
            span.clear()
            context.merge(coverage, into: &span, label: label)
            let check = LoadCursor.between(after: first - 1, before: cursor)
            context.fetchPage(entry, check, limit: limit, label: label) { [self] again in
                if let again { context.merge(again, into: &span, label: "\(label) \(check.query(limit: limit))") }
                run(context)
            }
        }
    }
}

/// `newest`: the newest page of the largest conversation, again and again;
/// successive newest pages must agree where they overlap (no late lower id).
final class NewestUser: CallbackUser {
    private var span = KnownSpan()
    private var steps = 0

    func run(_ context: UserContext) {
        guard let entry = context.catalog.largest else { return }
        let label = "newest \(entry.id)"
        context.fetchPage(entry, .newest, limit: context.settings.pageSize, label: label) { [self] coverage in
            if let coverage { context.merge(coverage, into: &span, label: label) }
            steps += 1
            if steps % 64 == 0 { context.flush() }
            run(context)
        }
    }
}

/// `short`: the newest page of a random short conversation (docs/architecture.md, "Storage layout": rows of
/// a conversation stored together make it as cheap as the largest one's).
final class ShortUser: CallbackUser {
    private var steps = 0
    private var shorts: [ConversationCatalog.Entry]?

    func run(_ context: UserContext) {
        if shorts == nil { shorts = context.catalog.short() }
        guard let shorts, !shorts.isEmpty else { return }
        let entry = context.randomEntry(from: shorts)
        context.fetchPage(entry, .newest, limit: context.settings.pageSize, label: "short \(entry.id)") { [self] _ in
            steps += 1
            if steps % 64 == 0 { context.flush() }
            run(context)
        }
    }
}

/// `jump`: `around` a random id of a conversation (found or not), then
/// around an id that page showed, which must be found at its `index`; the
/// two pages must agree where they overlap.
final class JumpUser: CallbackUser {
    private var span = KnownSpan()
    private var steps = 0

    func run(_ context: UserContext) {
        let entries = context.catalog.nonEmpty
        guard !entries.isEmpty else { return }
        let entry = context.randomEntry(from: entries)
        guard let oldest = entry.oldestID, let newest = entry.newestID else { return }
        let limit = context.settings.pageSize
        let label = "jump \(entry.id)"
        let target = Int64.random(in: oldest...newest, using: &context.random)
        span.clear()
        context.fetchPage(entry, .around(target), limit: limit, label: label) { [self] first in
            guard let first else { return finish(context) }
            context.merge(first, into: &span, label: label)
            let ids = context.page.ids
            guard !ids.isEmpty else { return finish(context) }
            let known = ids[Int.random(in: 0..<ids.count, using: &context.random)]
            context.fetchPage(entry, .around(known), limit: limit, label: label) { [self] second in
                if let second {
                    if context.page.anchor?.found != true {
                        context.log.violation(.anchorIndex, "\(label) around=\(known): an id a page showed is not found")
                    }
                    context.merge(second, into: &span, label: "\(label) around=\(known)")
                }
                finish(context)
            }
        }
    }

    private func finish(_ context: UserContext) {
        steps += 1
        if steps % 32 == 0 { context.flush() }
        run(context)
    }
}

/// `get`: one fixed target again and again, with no check beyond the status:
/// the tool's own ceiling against any HTTP server (docs/performance.md compares it with wrk
/// on a static file served by nginx).
final class GetUser: CallbackUser {
    func run(_ context: UserContext) {
        context.send(LoadRequest(target: context.settings.rawPath, kind: .raw)) { [self] _ in run(context) }
    }
}
