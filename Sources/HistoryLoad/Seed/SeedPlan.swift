import Foundation

/// How many messages each seeded conversation gets, and what to call it.
///
/// Real chat servers have a few huge rooms and a long tail of small ones:
/// the first conversation takes a large share (40%), the others follow a
/// Zipf-like law (the k-th gets a share proportional to 1/k^1.1), so with
/// 1,000 conversations and 1,000,000 messages `load-0000` holds 400,000,
/// `load-0001` about 100,000, and most hold a few hundred. Ids are
/// predictable (`load-0000` is always the largest), which is how `run`
/// finds them.
struct SeedPlan: Sendable {
    var conversations: Int
    var messages: Int
    var seed: UInt64
    var prefix: String

    static let largestShare = 0.4
    static let exponent = 1.1

    func conversationID(_ index: Int) -> String { ConversationCatalog.conversationID(prefix: prefix, index: index) }

    /// Messages per conversation, summing to `messages`; never increasing.
    func sizes() -> [Int] {
        guard conversations > 0 else { return [] }
        guard conversations > 1 else { return [messages] }
        var weights = [Double](repeating: 0, count: conversations)
        let tail = (1..<conversations).map { 1 / pow(Double($0), Self.exponent) }
        let tailSum = tail.reduce(0, +)
        weights[0] = Self.largestShare
        for k in 1..<conversations { weights[k] = (1 - Self.largestShare) * tail[k - 1] / tailSum }
        // Largest remainder, so the total is exact.
        var sizes = weights.map { Int(Double(messages) * $0) }
        var left = messages - sizes.reduce(0, +)
        let order = weights.indices.sorted {
            Double(messages) * weights[$0] - Double(sizes[$0]) > Double(messages) * weights[$1] - Double(sizes[$1])
        }
        for index in order where left > 0 {
            sizes[index] += 1
            left -= 1
        }
        return sizes
    }

    /// The work of seeding in pieces of at most `chunk` messages, so parallel
    /// workers share a large conversation instead of one worker owning it.
    func chunks(of chunk: Int) -> [SeedChunk] {
        var chunks: [SeedChunk] = []
        for (conversation, size) in sizes().enumerated() {
            var start = 0
            while start < size {
                let count = min(chunk, size - start)
                chunks.append(SeedChunk(index: chunks.count, conversation: conversation, first: start, count: count))
                start += count
            }
        }
        return chunks
    }
}

/// Messages `first..<first+count` of one conversation.
struct SeedChunk: Sendable, Hashable {
    var index: Int
    var conversation: Int
    var first: Int
    var count: Int
}

/// The edits and deletes a seeded conversation gets, per message appended.
enum SeedMix {
    static let replyPercent = 10
    static let editPermille = 30
    static let deletePermille = 10
}
