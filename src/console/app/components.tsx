import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

/** Copies through the async clipboard API; on plain-HTTP hosts (no secure context) through a selected textarea. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('the browser refused to copy');
}

/** A Copy button whose accessible name says what it copies; the result is announced politely. */
export function CopyButton({ text, label, visible = 'Copy' }: { text: string; label: string; visible?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const onClick = async () => {
    try {
      await copyText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setState('idle'), 2000);
  };
  return (
    <span class="copy">
      <button type="button" class="button small" aria-label={label} onClick={onClick}>
        {state === 'copied' ? 'Copied' : visible}
      </button>
      <span class="visually-hidden" role="status">
        {state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Copy failed: select the text and copy it by hand' : ''}
      </span>
    </span>
  );
}

/** A value shown as code, with a copy button next to it. */
export function CopyField({ value, label, multiline = false }: { value: string; label: string; multiline?: boolean }) {
  return (
    <div class={multiline ? 'copy-field multiline' : 'copy-field'}>
      <code class="copy-value">{value}</code>
      <CopyButton text={value} label={label} />
    </div>
  );
}

export interface ControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
  'aria-required'?: boolean;
}

/**
 * A labelled control with optional help text and error. The control is rendered by `children`,
 * which receives the id and the aria attributes that tie the label, help and error to it.
 */
export function Field({ label, hint, error, required, children, inline = false }: { label: string; hint?: ComponentChildren; error?: string | undefined; required?: boolean; inline?: boolean; children: (props: ControlProps) => JSX.Element }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ');
  const control = children({ id, 'aria-describedby': described || undefined, 'aria-invalid': error ? true : undefined, 'aria-required': required || undefined });
  return (
    <div class={`field${inline ? ' inline' : ''}${error ? ' has-error' : ''}`}>
      {inline && control}
      <label for={id}>
        {label}
        {required && (
          <span class="required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </label>
      {!inline && control}
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

/** An error announced at once (role=alert); renders nothing without a message. */
export function Alert({ message, testId }: { message: string | null | undefined; testId?: string }) {
  return (
    <div class="alert-slot" role="alert" data-testid={testId}>
      {message ? <p class="alert error">{message}</p> : null}
    </div>
  );
}

/** A polite status line (saved, n rows…). */
export function Status({ message, testId }: { message: string | null | undefined; testId?: string }) {
  return (
    <p class="status" role="status" data-testid={testId}>
      {message ?? ''}
    </p>
  );
}

/** A destructive action asks again in place (no modal): the first press arms it, the second confirms. */
export function ConfirmButton({ label, confirmLabel, onConfirm, disabled, ariaLabel }: { label: string; confirmLabel: string; onConfirm: () => void | Promise<void>; disabled?: boolean; ariaLabel?: string }) {
  const [armed, setArmed] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (armed) confirmRef.current?.focus();
  }, [armed]);
  if (!armed) {
    return (
      <button type="button" class="button small danger-outline" disabled={disabled} aria-label={ariaLabel} onClick={() => setArmed(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <button
        type="button"
        class="button small danger"
        ref={confirmRef}
        onClick={async () => {
          setArmed(false);
          await onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" class="button small" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  );
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      {label}
    </p>
  );
}

/** What a screen shows someone whose role does not reach it: a plain message, never a blank page. */
export function NoAccess({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" role="alert" data-testid="no-access">
      <h2>{title}</h2>
      <p>{children}</p>
    </section>
  );
}
