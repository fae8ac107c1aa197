/// The numbers of ``MessageWindow``'s policy, each with its default.
public struct MessageWindowConfiguration: Hashable, Sendable {
    /// Messages per page request, and what the window shrinks back to at the
    /// bottom. Default: 50, a few screens of a phone.
    public var pageSize: Int
    /// The most messages the window holds; past it, the edge away from the
    /// user is dropped. Default: 5 pages (250).
    public var capacity: Int
    /// The `window` sent with `after` pages: when more than this many
    /// messages lie above the window, the server answers the newest page
    /// (`reset: true`) instead of a page the client would have to walk up
    /// from. Default: ``capacity``, since walking further would trim
    /// everything loaded now anyway. Nil never sends `window`.
    public var serverResetWindow: Int?

    /// Values out of range are clamped (page size 1...200, capacity at
    /// least one page, reset window 1...10000) rather than trapping: these
    /// numbers often come from remote configuration. A nil
    /// `serverResetWindow` means the default, ``capacity``; to never send
    /// `window`, set the property to nil afterwards.
    public init(pageSize: Int = 50, capacity: Int? = nil, serverResetWindow: Int? = nil) {
        let pageSize = min(max(pageSize, 1), 200)
        self.pageSize = pageSize
        let capacity = max(capacity ?? pageSize * 5, pageSize)
        self.capacity = capacity
        self.serverResetWindow = min(max(serverResetWindow ?? capacity, 1), 10_000)
    }
}
