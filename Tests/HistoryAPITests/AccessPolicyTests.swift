import HistoryAccess
import HistoryTestSupport
import HistoryAPI
import HistoryStore
import Testing

/// The decisions themselves, without a server: each rule of the table once.
@Suite struct AccessPolicyTests {
    let mia = UserID("mia")!
    let zed = UserID("zed")!

    @Test func anAdminMayDoEverything() {
        let actions: [AccessPolicy.Action] = [.createConversation(choosingID: false), .createConversation(choosingID: true),
                                              .readConversation, .readPages, .readEvents, .readMembers,
                                              .append(sender: "x"), .edit(author: "x"), .delete(author: "x"),
                                              .putMember(target: mia), .removeMember(target: mia), .readInbox(owner: mia),
                                              .markRead(target: mia), .metrics]
        for action in actions {
            #expect(AccessPolicy.decide(action, caller: .admin(subject: nil), role: nil) == .allow)
            #expect(AccessPolicy.decide(action, caller: .admin(subject: "backend"), role: nil) == .allow)
        }
    }

    @Test func aNonMemberSeesNothingOfTheConversation() {
        let actions: [AccessPolicy.Action] = [.readConversation, .readPages, .readEvents, .readMembers, .append(sender: nil),
                                              .edit(author: "mia"), .delete(author: nil), .putMember(target: mia),
                                              .removeMember(target: mia), .markRead(target: mia)]
        for action in actions {
            #expect(AccessPolicy.decide(action, caller: .user(mia), role: nil) == .conversationNotFound, "\(action)")
        }
        #expect(AccessPolicy.decide(.createConversation(choosingID: false), caller: .user(mia), role: nil) == .allow)
        // Choosing the id would tell whether a conversation it cannot see exists.
        #expect(AccessPolicy.decide(.createConversation(choosingID: true), caller: .user(mia), role: nil) == .forbidden)
    }

    @Test func membersWriteAsThemselvesOnly() {
        #expect(AccessPolicy.decide(.append(sender: nil), caller: .user(mia), role: .member) == .allow)
        #expect(AccessPolicy.decide(.append(sender: "mia"), caller: .user(mia), role: .member) == .allow)
        #expect(AccessPolicy.decide(.append(sender: "zed"), caller: .user(mia), role: .owner) == .senderMismatch)
        #expect(AccessPolicy.decide(.edit(author: "mia"), caller: .user(mia), role: .member) == .allow)
        #expect(AccessPolicy.decide(.edit(author: "zed"), caller: .user(mia), role: .owner) == .notAuthor)
        #expect(AccessPolicy.decide(.delete(author: "zed"), caller: .user(mia), role: .member) == .notAuthor)
    }

    @Test func ownersManageMembersAndAnyoneMayLeave() {
        #expect(AccessPolicy.decide(.putMember(target: zed), caller: .user(mia), role: .owner) == .allow)
        #expect(AccessPolicy.decide(.putMember(target: zed), caller: .user(mia), role: .member) == .forbidden)
        #expect(AccessPolicy.decide(.putMember(target: mia), caller: .user(mia), role: .member) == .forbidden)
        #expect(AccessPolicy.decide(.removeMember(target: zed), caller: .user(mia), role: .owner) == .allow)
        #expect(AccessPolicy.decide(.removeMember(target: zed), caller: .user(mia), role: .member) == .forbidden)
        #expect(AccessPolicy.decide(.removeMember(target: mia), caller: .user(mia), role: .member) == .allow)
    }

    @Test func aUserReadsAndMarksItsOwnInboxOnly() {
        #expect(AccessPolicy.decide(.readInbox(owner: mia), caller: .user(mia), role: nil) == .allow)
        #expect(AccessPolicy.decide(.readInbox(owner: zed), caller: .user(mia), role: nil) == .forbidden)
        #expect(AccessPolicy.decide(.markRead(target: mia), caller: .user(mia), role: .member) == .allow)
        #expect(AccessPolicy.decide(.markRead(target: zed), caller: .user(mia), role: .owner) == .forbidden)
    }

    @Test func metricsAreForAdminsOnly() {
        #expect(AccessPolicy.decide(.metrics, caller: .user(mia), role: nil) == .forbidden)
    }
}
