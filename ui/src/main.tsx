// Paceline's web UI: a single page served by the master at /ui/ (src/api/ui_routes.h). Routes
// (under /ui): /, /pools, /pools/PATH, /jobs, /jobs/new, /jobs/:id, /jobs/:id/tasks/:instance, /hosts,
// /archive, /archive/:id, and for admins /audit and /tokens (in the menu only for an admin).
import "./styles.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Link, Route, Router, Switch, useLocation } from "wouter-preact";
import { isAdmin, useWhoAmI } from "./access";
import { clearToken, onTokenChange, token } from "./auth";
import { Archive, ArchivedJobPage } from "./pages/archive";
import { Audit } from "./pages/audit";
import { Hosts } from "./pages/hosts";
import { Job } from "./pages/job";
import { Jobs } from "./pages/jobs";
import { Login } from "./pages/login";
import { NewJob } from "./pages/new_job";
import { Overview } from "./pages/overview";
import { Pool } from "./pages/pool";
import { Pools } from "./pages/pools";
import { Task } from "./pages/task";
import { Tokens } from "./pages/tokens";

// Who the token acts as, next to Log out: "alice · submitter on /ads".
function SignedIn() {
  const who = useWhoAmI();
  if (who === null) return null;
  const where = who.role === "admin" ? "admin" : `${who.role} on ${who.scope}`;
  return (
    <span class="signed-in" title={who.group ? `group ${who.group}` : undefined}>
      {who.user} · {where}
    </span>
  );
}

function Nav() {
  const [location] = useLocation();
  const admin = isAdmin(useWhoAmI());
  const item = (href: string, label: string) => {
    const current = href === "/" ? location === "/" : location.startsWith(href);
    return (
      <li>
        <Link href={href} aria-current={current ? "page" : undefined}>
          {label}
        </Link>
      </li>
    );
  };
  return (
    <header>
      <nav aria-label="main">
        <Link href="/" class="brand">
          Paceline
        </Link>
        <ul>
          {item("/", "Overview")}
          {item("/pools", "Pools")}
          {item("/jobs", "Jobs")}
          {item("/hosts", "Hosts")}
          {item("/archive", "History")}
          {admin && item("/audit", "Audit")}
          {admin && item("/tokens", "Tokens")}
        </ul>
        <SignedIn />
        <button type="button" class="logout" onClick={clearToken}>
          Log out
        </button>
      </nav>
    </header>
  );
}

function App() {
  const [authed, setAuthed] = useState(token() !== null);
  useEffect(() => onTokenChange(() => setAuthed(token() !== null)), []);
  if (!authed) return <Login />;
  return (
    <Router base="/ui">
      <Nav />
      <main>
        <Switch>
          <Route path="/">
            <Overview />
          </Route>
          <Route path="/pools">
            <Pools />
          </Route>
          <Route path="/pools/*">{(p) => <Pool path={`/${decodeURIComponent(p["*"])}`} />}</Route>
          <Route path="/jobs">
            <Jobs />
          </Route>
          <Route path="/jobs/new">
            <NewJob />
          </Route>
          <Route path="/jobs/:id">{(p) => <Job id={Number(p.id)} />}</Route>
          <Route path="/jobs/:id/tasks/:instance">
            {(p) => <Task job={Number(p.id)} instance={Number(p.instance)} />}
          </Route>
          <Route path="/hosts">
            <Hosts />
          </Route>
          <Route path="/archive">
            <Archive />
          </Route>
          <Route path="/archive/:id">{(p) => <ArchivedJobPage id={Number(p.id)} />}</Route>
          <Route path="/audit">
            <Audit />
          </Route>
          <Route path="/tokens">
            <Tokens />
          </Route>
          <Route>
            <h1>Not found</h1>
            <p>
              No page here. <Link href="/">Overview</Link>
            </p>
          </Route>
        </Switch>
      </main>
    </Router>
  );
}

render(<App />, document.getElementById("app")!);
