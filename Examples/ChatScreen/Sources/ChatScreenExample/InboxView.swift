import HistoryClient
import SwiftUI

/// The inbox: conversations by last message with their unread badges, rows
/// moving to the top as messages arrive, more rows as the list's end comes
/// into view; a tap opens the chat at the first unread message.
struct InboxView: View {
    @State var model: InboxViewModel
    let client: ChatHistoryClient
    let me: String

    var body: some View {
        NavigationStack {
            List {
                if let error = model.lastError {
                    Text(error).font(.footnote).foregroundStyle(.red)
                }
                ForEach(model.rows) { row in
                    NavigationLink(value: row) { InboxRowView(row: row) }
                }
                if model.showsBottomSpinner {
                    ProgressView().frame(maxWidth: .infinity)
                        .task { await model.bottomSpinnerAppeared() }
                }
            }
            .animation(.default, value: model.rows.map(\.id))
            .navigationDestination(for: HistoryInboxRow.self) { row in
                ChatScreenView(model: ChatScreenModel(client: client, conversationID: row.id, me: me),
                               firstUnreadID: row.read.firstUnreadID)
            }
            .navigationTitle("Chats")
            .task { await model.opened() }
        }
    }
}

/// One conversation: its title, its last message and the unread badge.
struct InboxRowView: View {
    let row: HistoryInboxRow

    var body: some View {
        HStack {
            VStack(alignment: .leading, spacing: 2) {
                Text(row.conversation.title ?? row.id).font(.headline)
                if let last = row.lastMessage {
                    Text(last.deleted ? "Message deleted" : "\(last.sender): \(last.body)")
                        .font(.subheadline).foregroundStyle(.secondary).lineLimit(1)
                }
            }
            Spacer()
            if row.read.hasUnread {
                Text(row.read.unreadCapped ? "999+" : "\(row.read.unreadCount)")
                    .font(.caption.bold()).padding(.horizontal, 8).padding(.vertical, 2)
                    .background(Capsule().fill(.blue)).foregroundStyle(.white)
            }
        }
    }
}
