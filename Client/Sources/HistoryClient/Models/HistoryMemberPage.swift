/// One keyset page of a conversation's members, in `user_id` order.
///
/// The next page starts after the last member of this one; page on
/// ``hasMore``, never on the count (the server may answer fewer than asked).
public struct HistoryMemberPage: Codable, Hashable, Sendable {
    public var members: [HistoryMember]
    public var hasMore: Bool

    public init(members: [HistoryMember], hasMore: Bool) {
        self.members = members
        self.hasMore = hasMore
    }

    /// The `after` of the next page; nil when this is the last one.
    public var nextAfter: String? {
        hasMore ? members.last?.userID : nil
    }

    enum CodingKeys: String, CodingKey {
        case members
        case hasMore = "has_more"
    }
}
