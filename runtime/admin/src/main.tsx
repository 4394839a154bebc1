/** The admin web app (docs/admin.md): sign-in, the sidebar of entities, and the routes by hash. */
import { render, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import {
  describe,
  storeCredential,
  storedCredential,
  type Credential,
  type CredentialKind,
  type Entity,
  type Me,
} from './api.js';
import { FormView, ListView, RecordView } from './views.js';

/** `#/PRODUCT`, `#/PRODUCT/new`, `#/PRODUCT/r/<id>`, `#/PRODUCT/r/<id>/edit`. */
interface Route {
  readonly entity?: string;
  readonly view: 'home' | 'list' | 'new' | 'record' | 'edit';
  readonly id?: string;
}

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  const entity = parts[0] ?? '';
  if (entity === '') return { view: 'home' };
  if (parts[1] === 'new') return { entity, view: 'new' };
  if (parts[1] === 'r' && parts[2] !== undefined) {
    const id = decodeURIComponent(parts[2]);
    return { entity, view: parts[3] === 'edit' ? 'edit' : 'record', id };
  }
  return { entity, view: 'list' };
}

function SignIn(props: {
  credential: Credential | undefined;
  me: Me | undefined;
  onChange: (credential: Credential | undefined) => void;
}): JSX.Element {
  const [kind, setKind] = useState<CredentialKind>('bearer');
  const [value, setValue] = useState('');
  if (props.credential !== undefined)
    return (
      <div class="signin">
        <span>
          Signed in as <strong>{props.me?.subject ?? '…'}</strong>
          {props.me !== undefined && props.me.roles.length > 0
            ? ` (${props.me.roles.join(', ')})`
            : ''}
        </span>
        <button type="button" onClick={() => props.onChange(undefined)}>
          Sign out
        </button>
      </div>
    );
  return (
    <form
      class="signin"
      aria-label="Sign in"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim() !== '') props.onChange({ kind, value: value.trim() });
        setValue('');
      }}
    >
      <label for="credential-kind">Credential</label>
      <select
        id="credential-kind"
        value={kind}
        onChange={(event) => setKind(event.currentTarget.value as CredentialKind)}
      >
        <option value="bearer">Bearer token</option>
        <option value="apiKey">API key</option>
      </select>
      <label for="credential-value">Token or key</label>
      <input
        id="credential-value"
        type="password"
        autoComplete="off"
        value={value}
        onInput={(event) => setValue(event.currentTarget.value)}
      />
      <button type="submit">Sign in</button>
    </form>
  );
}

function App(): JSX.Element {
  const [credential, setCredential] = useState<Credential | undefined>(storedCredential);
  const [state, setState] = useState<
    { me: Me; entities: Entity[]; title: string | undefined } | undefined
  >(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [signInError, setSignInError] = useState<string | undefined>(undefined);
  const [hash, setHash] = useState(location.hash);

  useEffect(() => {
    const changed = (): void => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  useEffect(() => {
    setState(undefined);
    describe(credential)
      .then((described) => {
        if (described.title !== undefined) document.title = `${described.title} · Admin`;
        setState(described);
        setError(undefined);
      })
      .catch((caught: unknown) => {
        const reason = caught instanceof Error ? caught.message : String(caught);
        if (credential === undefined) {
          setError(reason);
          return;
        }
        // Refused credentials are forgotten; the message stays until the next attempt.
        setSignInError(`Signing in failed: ${reason}`);
        storeCredential(undefined);
        setCredential(undefined);
      });
  }, [credential?.value]);
  // Move focus to the new view's heading, for keyboard and screen reader users.
  useEffect(() => {
    document.getElementById('title')?.focus({ preventScroll: true });
  }, [hash, state === undefined]);

  const route = parseRoute(hash);
  const navigate = (next: string): void => {
    location.hash = next;
  };
  const entity = state?.entities.find((item) => item.name === route.entity);
  const common = { entities: state?.entities ?? [], credential, navigate };
  let main: JSX.Element;
  if (state === undefined) main = <p>{error === undefined ? 'Loading…' : ''}</p>;
  else if (route.view === 'home' || entity === undefined)
    main = (
      <section aria-labelledby="title">
        <h1 id="title" tabIndex={-1}>
          {route.entity === undefined ? 'Admin' : `No entity ${route.entity}`}
        </h1>
        <p>
          {state.entities.length === 0
            ? 'You may not list any entity: sign in.'
            : 'Pick an entity in the sidebar.'}
        </p>
      </section>
    );
  else if (route.view === 'new')
    main = <FormView key={`new-${entity.name}`} {...common} entity={entity} />;
  else if (route.view === 'edit')
    main = <FormView key={`edit-${route.id}`} {...common} entity={entity} id={route.id ?? ''} />;
  else if (route.view === 'record')
    main = <RecordView key={route.id} {...common} entity={entity} id={route.id ?? ''} />;
  else
    main = (
      <ListView key={`${entity.name}-${credential?.value ?? ''}`} {...common} entity={entity} />
    );

  return (
    <>
      {/* A button, not a link to #main: the app's routes live in the URL fragment. */}
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          Admin
        </a>
        <SignIn
          credential={credential}
          me={state?.me}
          onChange={(next) => {
            setSignInError(undefined);
            storeCredential(next);
            setCredential(next);
          }}
        />
      </header>
      {state !== undefined && !state.me.accessRules ? (
        <p class="warning" role="note">
          This service has no access rules: everything is public, and anyone who can reach it can
          read, change and delete every record.
        </p>
      ) : null}
      {error === undefined && signInError === undefined ? null : (
        <p class="alert" role="alert">
          {signInError ?? error}
        </p>
      )}
      <div class="layout">
        <nav class="sidebar" aria-label="Entities">
          <ul>
            {(state?.entities ?? []).map((item) => (
              <li>
                <a
                  href={`#/${item.name}`}
                  aria-current={item.name === route.entity ? 'page' : undefined}
                >
                  {item.displayName}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {main}
        </main>
      </div>
    </>
  );
}

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}
