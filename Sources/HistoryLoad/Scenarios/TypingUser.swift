import HTTPCore

/// `typing`'s typers: each says "typing" in one of the live conversations
/// on its own open-loop schedule (every 2 s: the rate a client following
/// the contract's 2 s rule sends at while someone keeps typing), and moves
/// to another conversation now and then, as people do. Every call must be
/// 204; the user's token must make it a member (tokens mode: `seed
/// --add-members`).
final class TypingUser: CallbackUser {
    private var conversation: ConversationCatalog.Entry?
    private var calls = 0

    func run(_ context: UserContext) {
        if conversation == nil || calls % 8 == 0 {
            conversation = context.randomEntry(from: context.catalog.live(context.settings.liveConversations))
        }
        guard let conversation else { return }
        calls += 1
        if calls % 64 == 0 { context.flush() }
        let request = LoadRequest(method: .put, target: "/v1/conversations/\(conversation.id)/typing",
                                  body: Array(#"{"typing":true}"#.utf8), kind: .typing, accepted: 204...204,
                                  start: context.takeSlot())
        context.send(request) { [self] _ in run(context) }
    }
}
