/// One keyset page of a conversation's members, in `user_id` byte order.
/// The next page starts after the last member's `userID`; `hasMore` is
/// exact (one extra row was read to know it), never a guess from the count.
public struct MemberPage: Hashable, Sendable {
    public var members: [Member]
    public var hasMore: Bool

    public init(members: [Member], hasMore: Bool) {
        self.members = members
        self.hasMore = hasMore
    }

    /// The bounds of `limit`, as the contract gives them.
    public static let limitRange = 1...1000
}
