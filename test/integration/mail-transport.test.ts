import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MailTransport, type OutgoingMail, smtpTransport } from '../../services/mail/mail-transport.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

let sequence = 0;
const mail = (to = 'guest@example.org'): OutgoingMail => {
  sequence += 1;
  return { from: 'booking@example.org', to, subject: `Mail ${sequence}`, text: `Body ${sequence}`, messageId: `<transport-${process.pid}-${sequence}@example.org>` };
};

/** Waits (polling) until the sink holds no open session; fails after 5 s. */
async function noOpenSessions(sink: SmtpSink): Promise<void> {
  const until = Date.now() + 5_000;
  while (sink.openSessions() > 0) {
    if (Date.now() > until) throw new Error(`${sink.openSessions()} SMTP sessions still open`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SMTP transport: sessions kept open between mails', () => {
  let sink: SmtpSink;
  let transport: MailTransport | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterEach(async () => {
    transport?.close();
    transport = undefined;
    sink.refuse(null);
    await noOpenSessions(sink);
  });
  afterAll(async () => {
    await sink?.close();
  });

  it('sends mails one after another over one session, each handed over before the server has it', async () => {
    transport = smtpTransport(sink.url);
    const before = sink.sessions();
    for (let i = 0; i < 3; i++) {
      const count = sink.messages.length;
      let handedOverAt = -1;
      const sent = mail();
      await transport.send(sent, async () => {
        handedOverAt = sink.messages.length;
      });
      expect(handedOverAt).toBe(count);
      expect(sink.messages.at(-1)!.messageId).toBe(sent.messageId);
    }
    expect(sink.sessions() - before).toBe(1);
  });

  it('mails sent at once take sessions of their own, which later mails reuse', async () => {
    transport = smtpTransport(sink.url);
    const before = sink.sessions();
    await Promise.all([transport.send(mail()), transport.send(mail())]);
    await Promise.all([transport.send(mail()), transport.send(mail())]);
    expect(sink.sessions() - before).toBe(2);
  });

  it('a session the server closed meanwhile is replaced: the mail goes out once, over a new session', async () => {
    transport = smtpTransport(sink.url);
    await transport.send(mail());
    const before = sink.sessions();
    sink.dropSessions();
    await noOpenSessions(sink);
    const sent = mail();
    await transport.send(sent);
    expect(sink.sessions() - before).toBe(1);
    expect(sink.messages.filter((m) => m.messageId === sent.messageId)).toHaveLength(1);
  });

  it('a kept session the server ends at the next mail (421) is replaced: the mail goes out once, over a new session', async () => {
    transport = smtpTransport(sink.url);
    await transport.send(mail());
    const before = sink.sessions();
    sink.closeAtNextMail();
    const sent = mail();
    let handOvers = 0;
    await transport.send(sent, async () => {
      handOvers += 1;
    });
    expect(handOvers).toBe(1);
    expect(sink.sessions() - before).toBe(1);
    expect(sink.messages.filter((m) => m.messageId === sent.messageId)).toHaveLength(1);
  });

  it.each([
    [550, 'no such mailbox'],
    [451, 'greylisted, try again later'],
  ])('a refused recipient (%i) fails that mail at once, over a kept session too, and the next mail still goes out', async (code, message) => {
    transport = smtpTransport(sink.url);
    await transport.send(mail());
    sink.refuse((address) => (address.startsWith('gone@') ? { code, message } : null));
    const before = sink.sessions();
    await expect(transport.send(mail('gone@example.org'))).rejects.toMatchObject({ responseCode: code });
    // The refused mail's session was closed and nothing was retried over another.
    expect(sink.sessions() - before).toBe(0);
    const next = mail();
    await transport.send(next);
    expect(sink.messages.at(-1)!.messageId).toBe(next.messageId);
  });

  it('a session whose login fails is closed, and the mail fails', async () => {
    // The sink offers no AUTH: a URL with credentials cannot log in.
    transport = smtpTransport(sink.url.replace('smtp://', 'smtp://someone:secret@'));
    const before = sink.sessions();
    await expect(transport.send(mail())).rejects.toThrow();
    expect(sink.sessions() - before).toBe(1);
    // afterEach: no session is left open.
  });

  it('closes a session after its number of mails, after it waited idle, and on close()', async () => {
    transport = smtpTransport(sink.url, { messages: 2, idleMs: 50 });
    const before = sink.sessions();
    for (let i = 0; i < 3; i++) await transport.send(mail());
    // Two mails on the first session, the third on a second one.
    expect(sink.sessions() - before).toBe(2);
    // The second session says QUIT once it waited idle.
    await noOpenSessions(sink);
    await transport.send(mail());
    expect(sink.openSessions()).toBe(1);
    transport.close();
    await noOpenSessions(sink);
  });
});
